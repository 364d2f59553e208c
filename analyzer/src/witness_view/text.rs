//! The text view of a witness: the table `jrace witness` prints.

use super::*;

impl View {
    /// The text view, with [`TextOptions`]: colour adds ANSI styles (bold racing rows, dim
    /// elided row, highlighted departure; the marks carry the meaning without it), `wide`
    /// keeps long cells whole.
    pub fn to_text(&self, opts: TextOptions) -> String {
        let trunc = |s: &str| if opts.wide { s.to_owned() } else { trunc(s) };
        let (bold, dim, yellow, reset) = if opts.color {
            ("\x1b[1;31m", "\x1b[2m", "\x1b[33m", "\x1b[0m")
        } else {
            ("", "", "", "")
        };
        let mut out = String::new();
        for l in self.header_lines() {
            out.push_str(&l);
            out.push('\n');
        }
        if self.folded {
            let _ = writeln!(
                out,
                "({} threads: the column `others` holds {})",
                self.columns[self.ending].threads.len() + self.ending,
                self.columns[self.ending].threads.join(", ")
            );
        }
        out.push('\n');

        let cells: Vec<String> = self
            .rows
            .iter()
            .map(|r| trunc(self.cell(r).as_str()))
            .collect();
        let held: Vec<String> = (0..self.columns.len())
            .map(|c| trunc(self.held_cell(c).as_str()))
            .collect();
        let mut widths: Vec<usize> = self.columns.iter().map(|c| c.name.len()).collect();
        for (k, r) in self.rows.iter().enumerate().skip(self.prefix) {
            widths[r.column] = widths[r.column].max(cells[k].len());
        }
        if self.prefix > 0 {
            for (c, h) in held.iter().enumerate() {
                widths[c] = widths[c].max(h.len());
            }
        }
        let elided_step = if self.prefix == 1 {
            "1".to_owned()
        } else {
            format!("1-{}", self.prefix)
        };
        let sw = self
            .rows
            .len()
            .to_string()
            .len()
            .max(elided_step.len())
            .max(4);
        let ew = self
            .rows
            .iter()
            .map(|r| r.event.to_string().len())
            .max()
            .unwrap_or(1)
            .max(elided_step.len())
            .max(5);
        let aw = self
            .rows
            .iter()
            .skip(self.prefix)
            .map(|r| r.location.len())
            .max()
            .unwrap_or(2)
            .max(2);
        // Header line.
        let mut h = format!("{:>w$}  {:>ew$} |", "step", "event", w = sw + 1);
        let mut sep = format!("{}+", "-".repeat(sw + ew + 4));
        for (c, col) in self.columns.iter().enumerate() {
            let _ = write!(h, " {:<w$} |", col.name, w = widths[c]);
            let _ = write!(sep, "{}+", "-".repeat(widths[c] + 2));
        }
        let _ = write!(h, " at");
        sep.push_str(&"-".repeat(aw + 1));
        let _ = writeln!(out, "{h}");
        let _ = writeln!(out, "{sep}");
        let blank = " ".repeat(sw + ew + 4);
        if self.prefix > 0 {
            let _ = writeln!(
                out,
                "{dim}{:>w$}  {:>ew$} | ... {}{reset}",
                elided_step,
                elided_step,
                self.prefix_summary(),
                w = sw + 1
            );
            let mut l = format!("{dim}{blank}|");
            for (c, hc) in held.iter().enumerate() {
                let _ = write!(l, " {:<w$} |", hc, w = widths[c]);
            }
            let _ = writeln!(out, "{}{reset}", l.trim_end());
        }
        for (k, r) in self.rows.iter().enumerate().skip(self.prefix) {
            if self.departure.as_ref().is_some_and(|d| d.0 == k) {
                let _ = writeln!(out, "{yellow}-- {} --{reset}", self.departure_text());
            }
            let mark = if r.race {
                ">>"
            } else if r.overtakes {
                "^ "
            } else {
                "  "
            };
            let mut l = format!("{mark}{:>w$}  {:>ew$} |", r.step, r.event, w = sw - 1);
            for (c, w) in widths.iter().enumerate() {
                let text = if c == r.column { cells[k].as_str() } else { "" };
                let _ = write!(l, " {:<w$} |", text, w = w);
            }
            let _ = write!(l, " {}", r.location);
            if r.race {
                let _ = writeln!(out, "{bold}{l}{reset}");
            } else {
                let _ = writeln!(out, "{l}");
            }
        }
        if self.departure.is_none() {
            let _ = writeln!(out, "{yellow}-- {} --{reset}", self.departure_text());
        }
        out.push('\n');
        let _ = writeln!(out, "{}", self.footer_text());
        for line in self.stale_notes() {
            let _ = writeln!(out, "{line}");
        }
        out
    }
}

fn trunc(s: &str) -> String {
    if s.chars().count() <= MAX_CELL {
        s.to_owned()
    } else {
        let t: String = s.chars().take(MAX_CELL - 3).collect();
        format!("{t}...")
    }
}
