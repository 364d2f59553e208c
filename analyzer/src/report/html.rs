//! The HTML report (`--format html`, docs/REPORT.md#html-report): one self-contained page
//! (no network, nothing to install) with every race: both accesses with their threads,
//! locations, methods, locks and stacks, the detectors that found it, its fingerprint and
//! where to see its witness. A small script sorts the races by id, variable, class,
//! detector or kind and filters them by text; without it the page still reads, in id
//! order. The style and the script live in `html/` beside this file.

use crate::report::{AccessReport, RaceReport, Report};
use std::collections::HashMap;
use std::fmt::Write as _;

/// Witness views ([`crate::witness_view::View::to_html`]) to embed, by (trace, race id in
/// that trace's own report): with `--witness`, each race's block holds its schedule, step
/// by step, in a collapsed frame.
pub type WitnessPages = HashMap<(String, u64), String>;

const CSS: &str = include_str!("../html/report.css");
const JS: &str = include_str!("../html/report.js");

/// The class a race's variable belongs to, for sorting: `pkg.Class` of `pkg.Class.field`;
/// an array type (`int[]`), a recorder's own name (`$task`) or an undotted name is its
/// own; a collection's state (`java.util.HashMap.$state`) belongs to the collection's class.
pub fn variable_class(variable: &str) -> &str {
    if variable.starts_with('$') || variable.ends_with(']') {
        return variable;
    }
    variable.rsplit_once('.').map_or(variable, |(c, _)| c)
}

/// The page for `r`. `source` names what was analyzed (the trace or traces), for the
/// title and for the `jrace witness` commands it suggests; `views` are embedded where a
/// race has one.
pub fn to_html(r: &Report, source: &str, generator: &str, views: &WitnessPages) -> String {
    let mut o = String::new();
    let _ = write!(
        o,
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
         <meta name=\"generator\" content=\"{}\">\n<title>jrace: {} race{} in {}</title>\n\
         <style>{CSS}</style>\n</head>\n<body>\n",
        esc(generator),
        r.races.len(),
        if r.races.len() == 1 { "" } else { "s" },
        esc(source)
    );
    let _ = writeln!(
        o,
        "<h1>{} race{} in <code>{}</code></h1>",
        r.races.len(),
        if r.races.len() == 1 { "" } else { "s" },
        esc(source)
    );
    summary(&mut o, r);
    let _ = writeln!(o, "<h2>Races</h2>");
    if r.races.is_empty() {
        let _ = writeln!(o, "<p class=\"none\">No race was reported.</p>");
    }
    let _ = writeln!(o, "<div id=\"races\">");
    for race in &r.races {
        race_block(&mut o, r, race, source, views);
    }
    let _ = writeln!(o, "</div>");
    if let Some(ds) = &r.deadlocks {
        deadlocks(&mut o, ds);
    }
    let _ = write!(
        o,
        "<footer>{} &middot; the JSON report (<code>--format json</code>) has every field, \
         docs/REPORT.md describes them</footer>\n<script>{JS}</script>\n</body>\n</html>\n",
        esc(generator)
    );
    o
}

/// The predicted deadlocks: per deadlock, each thread's held and requested lock with
/// where it took and requests them.
fn deadlocks(o: &mut String, ds: &[crate::report::deadlock::DeadlockReport]) {
    let _ = writeln!(o, "<h2>Deadlocks</h2>");
    if ds.is_empty() {
        let _ = writeln!(o, "<p class=\"none\">No deadlock was predicted.</p>");
    }
    for d in ds {
        let _ = writeln!(
            o,
            "<details class=\"deadlock\" open><summary>Deadlock #{} ({} threads) \
             <code>{}</code></summary>\n<ul>",
            d.id,
            d.threads.len(),
            esc(&d.fingerprint)
        );
        for t in &d.threads {
            let _ = writeln!(
                o,
                "<li>thread <b>{}</b> holds <code>{}</code> (taken at <code>{}</code>, event {}) \
                 and requests <code>{}</code> at <code>{}</code> (event {})</li>",
                esc(&t.thread),
                esc(&t.holds),
                esc(&t.held_at.location),
                t.held_at.event,
                esc(&t.requests),
                esc(&t.requested_at.location),
                t.requested_at.event
            );
        }
        let _ = writeln!(
            o,
            "</ul><p>Reached by a validated schedule of {} events.</p></details>",
            d.schedule_events
        );
    }
}

fn summary(o: &mut String, r: &Report) {
    let t = &r.trace;
    let _ = writeln!(
        o,
        "<p>{} events, {} threads, {} variables, {} locks{}.</p>",
        t.events,
        t.threads,
        t.variables,
        t.locks,
        if r.traces.is_some() { " in all" } else { "" }
    );
    if let Some(c) = &t.truncated {
        let _ = writeln!(o, "<p><strong>{}</strong></p>", esc(&c.line()));
    }
    if let Some(ts) = &r.traces {
        let _ = writeln!(
            o,
            "<table class=\"summary\"><thead><tr><th>trace</th><th>events</th><th>races</th>\
             <th>cut short</th></tr></thead><tbody>"
        );
        for e in ts {
            let cut = e
                .trace
                .truncated
                .as_ref()
                .map_or(String::new(), |c| esc(c.reason));
            let _ = writeln!(
                o,
                "<tr><td><code>{}</code></td><td class=\"num\">{}</td><td class=\"num\">{}</td><td>{cut}</td></tr>",
                esc(&e.name),
                e.trace.events,
                e.races
            );
        }
        let _ = writeln!(o, "</tbody></table>");
    }
    let _ = writeln!(
        o,
        "<table class=\"summary\"><thead><tr><th>detector</th><th>races</th><th>seconds</th>\
         <th>undecided</th><th>notes</th></tr></thead><tbody>"
    );
    for d in &r.detectors {
        let mut notes = Vec::new();
        if d.warnings_only {
            notes.push("not sound: warnings may be false alarms");
        }
        match d.complete {
            Some(true) => notes.push("complete"),
            Some(false) => notes.push("may be incomplete"),
            None => {}
        }
        if let Some(n) = &d.note {
            notes.push(n);
        }
        let _ = writeln!(
            o,
            "<tr><td>{}</td><td class=\"num\">{}</td><td class=\"num\">{:.3}</td><td class=\"num\">{}</td><td>{}</td></tr>",
            d.name,
            d.races,
            d.seconds,
            d.unknown.map_or(String::new(), |u| u.to_string()),
            notes.join(", ")
        );
    }
    let _ = writeln!(o, "</tbody></table>");
    if let Some(m) = &r.omitted {
        let _ = writeln!(o, "<p><strong>{}</strong></p>", esc(&m.line()));
    }
    if let Some(s) = &r.suppressed {
        let _ = writeln!(
            o,
            "<p>Suppressed: {} race{}.</p>",
            s.count,
            if s.count == 1 { "" } else { "s" }
        );
        if !s.rules.is_empty() {
            let _ = writeln!(o, "<ul>");
            for h in &s.rules {
                let _ = writeln!(
                    o,
                    "<li>{} by <code>{}</code> ({}:{})</li>",
                    h.races,
                    esc(&h.rule),
                    esc(&h.file),
                    h.line
                );
            }
            let _ = writeln!(o, "</ul>");
        }
    }
    if let Some(b) = &r.baseline {
        let _ = writeln!(
            o,
            "<p>Baseline <code>{}</code>: {} new, {} known.</p>",
            esc(&b.file),
            b.new,
            b.known
        );
    }
}

fn race_block(o: &mut String, r: &Report, race: &RaceReport, source: &str, views: &WitnessPages) {
    let warning = r.only_warnings(race);
    let mut class = String::from("race");
    if warning {
        class.push_str(" warning");
    }
    if race.baseline == Some("known") {
        class.push_str(" known");
    }
    let [a1, a2] = &race.accesses;
    let _ = write!(
        o,
        "<details class=\"{class}\" id=\"race-{id}\" data-id=\"{id}\" data-variable=\"{var}\" \
         data-class=\"{cls}\" data-detectors=\"{dets}\" data-kind=\"{kind}\">\n<summary>#{id} \
         {title} on <span class=\"var\">{var}</span> ({kind}) at <span class=\"loc\">{l1}</span> \
         / <span class=\"loc\">{l2}</span>",
        id = race.id,
        var = esc(&race.variable),
        cls = esc(variable_class(&race.variable)),
        dets = esc(&race.detectors.join(",")),
        kind = esc(&race.kind),
        title = if warning {
            "possible race (lockset warning)"
        } else {
            "data race"
        },
        l1 = esc(&a1.location),
        l2 = esc(&a2.location),
    );
    for d in &race.detectors {
        let _ = write!(o, "<span class=\"tag det\">{d}</span>");
    }
    if let Some(b) = race.baseline {
        let _ = write!(o, "<span class=\"tag {b}\">{b}</span>");
    }
    let _ = writeln!(o, "</summary>");
    access(o, a1, "");
    access(o, a2, "and concurrently, ");
    let _ = write!(o, "<p class=\"fp\">fingerprint {}", esc(&race.fingerprint));
    if !race.seen_in.is_empty() {
        let seen: Vec<String> = race
            .seen_in
            .iter()
            .map(|s| format!("<code>{}</code> (race #{})", esc(&s.trace), s.id))
            .collect();
        let _ = write!(
            o,
            "; seen in {} trace{}: {}",
            race.seen_in.len(),
            if race.seen_in.len() == 1 { "" } else { "s" },
            seen.join(", ")
        );
    }
    let _ = writeln!(o, "</p>");
    // Where to see the schedule: each trace's own race id (a merged report) or this one.
    let here = [(source.to_string(), race.id)];
    let places: Vec<(String, u64)> = if race.seen_in.is_empty() {
        here.to_vec()
    } else {
        race.seen_in
            .iter()
            .map(|s| (s.trace.clone(), s.id))
            .collect()
    };
    let (trace, id) = &places[0];
    let cmd = format!(
        "jrace witness {} --race {id} -d {} --html race-{id}.html",
        shell_word(trace),
        race.detectors.join(",")
    );
    let _ = write!(o, "<div class=\"witness\">");
    match &race.witness {
        Some(Some(steps)) => {
            let _ = write!(
                o,
                "Witness: a schedule of {} events that runs the two accesses back to back \
                 (in the JSON report). ",
                steps.len()
            );
        }
        Some(None) => {
            let _ = write!(o, "No validated witness was found. ");
        }
        None => {}
    }
    let _ = writeln!(o, "To see how it happens: <code>{}</code></div>", esc(&cmd));
    if let Some(page) = views.get(&(trace.clone(), *id)) {
        let _ = writeln!(
            o,
            "<details class=\"view\"><summary>Witness view: the schedule step by step</summary>\n\
             <iframe title=\"witness of race {}\" loading=\"lazy\" srcdoc=\"{}\"></iframe></details>",
            race.id,
            esc(page)
        );
    }
    let _ = writeln!(o, "</details>");
}

fn access(o: &mut String, a: &AccessReport, lead: &str) {
    let _ = write!(
        o,
        "<div class=\"access\">{lead}<span class=\"who\">{}</span> by thread <code>{}</code> at \
         <span class=\"loc\">{}</span>",
        esc(a.op),
        esc(&a.thread),
        esc(&a.location)
    );
    if let Some(m) = &a.method {
        let _ = write!(o, " in <code>{}</code>", esc(m));
    }
    let _ = write!(o, " (event {})<br>locks held: ", a.event);
    if a.locks.is_empty() {
        let _ = write!(o, "<span class=\"none\">none</span>");
    }
    for l in &a.locks {
        let _ = write!(o, "<span class=\"lock\">{}</span> ", esc(l));
    }
    if !a.stack.is_empty() {
        let _ = write!(o, "\n<ol class=\"stack\">");
        for f in &a.stack {
            let _ = write!(o, "<li>{}</li>", esc(f));
        }
        let _ = write!(o, "</ol>");
    } else {
        o.push_str("<br>");
    }
    if let Some(c) = &a.created_at {
        let _ = write!(o, "thread started at <span class=\"loc\">{}</span>", esc(c));
    }
    let _ = writeln!(o, "</div>");
}

/// `s` as one shell word, quoted when it needs to be.
fn shell_word(s: &str) -> String {
    if !s.is_empty()
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || "/._-+:=@%".contains(c))
    {
        s.to_string()
    } else {
        format!("'{}'", s.replace('\'', "'\\''"))
    }
}

/// HTML-escapes `& < > " '`.
pub fn esc(s: &str) -> String {
    let mut o = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => o.push_str("&amp;"),
            '<' => o.push_str("&lt;"),
            '>' => o.push_str("&gt;"),
            '"' => o.push_str("&quot;"),
            '\'' => o.push_str("&#39;"),
            c => o.push(c),
        }
    }
    o
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn classes_of_variables() {
        assert_eq!(variable_class("demo.Bank.balance"), "demo.Bank");
        assert_eq!(variable_class("java.lang.Object[]"), "java.lang.Object[]");
        assert_eq!(variable_class("$task"), "$task");
        assert_eq!(
            variable_class("java.util.HashMap.$state"),
            "java.util.HashMap"
        );
        assert_eq!(variable_class("x"), "x");
        assert_eq!(shell_word("traces/123"), "traces/123");
        assert_eq!(shell_word("my trace's"), "'my trace'\\''s'");
    }
}
