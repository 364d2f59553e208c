//! Method descriptors (JVMS 4.3.3), the one parser the agent uses for them.

/// The parameter descriptors of a method descriptor, in order, and its return descriptor
/// (`V` for void): `(I[JLjava/lang/String;)Z` gives `["I", "[J", "Ljava/lang/String;"]`
/// and `"Z"`. `None` when it is not a method descriptor. Works on bytes, so a malformed
/// descriptor with a multi-byte character anywhere is refused, not a panic.
pub fn method_parts(desc: &str) -> Option<(Vec<&str>, &str)> {
    let b = desc.as_bytes();
    if b.first() != Some(&b'(') {
        return None;
    }
    let mut k = 1;
    let mut params = Vec::new();
    while *b.get(k)? != b')' {
        let start = k;
        while *b.get(k)? == b'[' {
            k += 1;
        }
        if *b.get(k)? == b'L' {
            k += b[k..].iter().position(|&c| c == b';')?;
        }
        k += 1;
        params.push(desc.get(start..k)?);
    }
    let ret = desc.get(k + 1..)?;
    if ret.is_empty() {
        return None;
    }
    Some((params, ret))
}

#[cfg(test)]
mod tests {
    use super::method_parts;

    #[test]
    fn parts_of_descriptors() {
        assert_eq!(
            method_parts("(I[JLjava/lang/String;)Z"),
            Some((vec!["I", "[J", "Ljava/lang/String;"], "Z"))
        );
        assert_eq!(method_parts("()V"), Some((vec![], "V")));
        assert_eq!(
            method_parts("([[Ljava/lang/Object;D)[I"),
            Some((vec!["[[Ljava/lang/Object;", "D"], "[I"))
        );
        for bad in ["", "I", "(", "(L;", "(Ljava/lang/String)V", "(I)", "(é)V"] {
            assert_eq!(method_parts(bad), None, "{bad}");
        }
    }
}
