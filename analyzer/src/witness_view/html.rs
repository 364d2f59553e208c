//! The HTML view of a witness: one self-contained page (style and script from
//! `analyzer/src/html/`).

use super::*;

impl View {
    /// The HTML view: one self-contained page. `trace_name` is shown as given (callers pass
    /// a file name, not a full path); `generator` goes into `<meta name="generator">`.
    pub fn to_html(&self, trace_name: &str, generator: &str) -> String {
        let r = &self.race;
        let len = self.rows.len();
        let mut o = String::new();
        let _ = write!(
            o,
            "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
             <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
             <meta name=\"generator\" content=\"{}\">\n<title>jrace witness: {}</title>\n\
             <style>{CSS}</style>\n</head>\n<body>\n",
            esc(generator),
            match &self.deadlock {
                Some(d) => format!("deadlock {}", d.id),
                None => format!("race {} on {}", r.id, esc(&r.variable)),
            }
        );
        // Header.
        if let Some(d) = &self.deadlock {
            let _ = write!(
                o,
                "<header>\n<h1>Deadlock {} ({} threads)</h1>\n<dl>\n",
                d.id,
                d.threads.len()
            );
        } else {
            let _ = write!(
                o,
                "<header>\n<h1>Race {} on <code>{}</code></h1>\n<dl>\n",
                r.id,
                esc(&r.variable)
            );
        }
        let dd = |o: &mut String, k: &str, v: &str| {
            let _ = writeln!(o, "<dt>{}</dt><dd>{}</dd>", esc(k), v);
        };
        if let Some(d) = &self.deadlock {
            for t in &d.threads {
                dd(
                    &mut o,
                    &format!("thread {}", t.thread),
                    &format!(
                        "holds {} (event {}), requests {} at <span class=\"loc\">{}</span> (event {})",
                        lock_badges(std::slice::from_ref(&t.holds)),
                        t.held_at.event,
                        lock_badges(std::slice::from_ref(&t.requests)),
                        esc(&t.requested_at.location),
                        t.requested_at.event
                    ),
                );
            }
            dd(
                &mut o,
                "schedule",
                &format!(
                    "{} steps, model {}, first {} as recorded; then each thread requests its lock",
                    len - self.ending,
                    self.model,
                    self.prefix
                ),
            );
        } else {
            dd(&mut o, "race", &r.id.to_string());
            dd(
                &mut o,
                "variable",
                &format!("<code>{}</code>", esc(&r.variable)),
            );
            dd(&mut o, "kind", &esc(&r.kind));
            for (k, role) in ["first access", "second access"].iter().enumerate() {
                let row = &self.rows[len - 2 + k];
                let a = &r.accesses[k];
                let mut v = format!(
                    "<span class=\"access\" id=\"access-{}\">{} <code>{}</code> on <code>{}</code> at <span class=\"loc\">{}</span>",
                    k + 1,
                    esc(&row.thread),
                    esc(&row.op),
                    esc(&r.variable),
                    esc(&row.location)
                );
                if let Some(m) = &a.method {
                    let _ = write!(v, " in <code>{}</code>", esc(m));
                }
                let _ = write!(
                    v,
                    ", event {}, holds {}</span>",
                    row.event,
                    lock_badges(&self.race_locks[k])
                );
                if !a.stack.is_empty() {
                    v.push_str("<ol class=\"stack\">");
                    for f in &a.stack {
                        let _ = write!(v, "<li><code>{}</code></li>", esc(f));
                    }
                    v.push_str("</ol>");
                }
                dd(&mut o, role, &v);
            }
            dd(&mut o, "detectors", &esc(&r.detectors.join(", ")));
            dd(
                &mut o,
                "witness",
                &format!(
                    "{} steps, model {}, first {} as recorded",
                    len, self.model, self.prefix
                ),
            );
        }
        dd(
            &mut o,
            "trace",
            &format!("<code>{}</code>", esc(trace_name)),
        );
        o.push_str("</dl>\n</header>\n");
        // Legend.
        o.push_str(
            "<section class=\"legend\"><h2>Legend</h2><ul>\
             <li><span class=\"label\">RACE</span> one of the two racing accesses (outlined row)</li>\
             <li><b>^</b> the row overtakes: it runs before an event recorded earlier</li>\
             <li><span class=\"lock\">lock</span> a lock the thread holds after the event</li>\
             <li><b>~</b> a read that gets its value from another write than in the recording \
             (footnotes below the table)</li>\
             <li>Each column is a thread; only the acting thread's cell is filled. \
             Hover a cell for details.</li></ul></section>\n",
        );
        if self.folded {
            let _ = writeln!(
                o,
                "<p class=\"note\">{} threads: the column <em>others</em> holds {}.</p>",
                self.columns[self.ending].threads.len() + self.ending,
                esc(&self.columns[self.ending].threads.join(", "))
            );
        }
        let colgroup = {
            let mut c = String::from(
                "<colgroup><col class=\"c-mark\"><col class=\"c-step\"><col class=\"c-event\">",
            );
            for _ in &self.columns {
                c.push_str("<col class=\"c-thread\">");
            }
            c.push_str("<col class=\"c-at\"></colgroup>");
            c
        };
        let ncols = self.columns.len() + 4;
        // Elided prefix.
        if self.prefix > 0 {
            let _ = write!(
                o,
                "<details class=\"elided\"><summary>{}</summary>\n<table class=\"prefix\">{colgroup}<tbody>\n",
                esc(&self.prefix_summary())
            );
            let start = self.prefix.saturating_sub(MAX_PREFIX_ROWS);
            if start > 0 {
                let _ = writeln!(
                    o,
                    "<tr class=\"note\"><td colspan=\"{ncols}\">{start} earlier rows not shown</td></tr>"
                );
            }
            for row in &self.rows[start..self.prefix] {
                self.html_row(&mut o, row);
            }
            o.push_str("<tr class=\"held\"><td></td><td colspan=\"2\">locks held</td>");
            for c in 0..self.columns.len() {
                let parts = &self.prefix_locks[c];
                let mut cell = String::new();
                for (t, l) in parts {
                    if self.folded && c == self.ending {
                        if l.is_empty() {
                            continue;
                        }
                        let _ = write!(cell, "{}: ", esc(t));
                    }
                    cell.push_str(&lock_badges(l));
                    cell.push(' ');
                }
                let _ = write!(o, "<td{}>{}</td>", self.col_class(c), cell.trim_end());
            }
            o.push_str("<td></td></tr>\n</tbody></table></details>\n");
        }
        if self.departure.is_none() {
            let _ = writeln!(o, "<p class=\"depart\">{}</p>", esc(&self.departure_text()));
        }
        // Schedule.
        let _ = write!(
            o,
            "<table class=\"schedule\">{colgroup}\n<thead><tr><th></th><th>step</th><th>event</th>"
        );
        for (c, col) in self.columns.iter().enumerate() {
            let _ = write!(
                o,
                "<th data-thread=\"{}\"{}>{}</th>",
                esc(&col.name),
                self.col_class(c),
                esc(&col.name)
            );
        }
        o.push_str("<th>at</th></tr></thead>\n<tbody>\n");
        let rest = &self.rows[self.prefix..];
        let shown_end = rest.len().min(MAX_ROWS);
        // Keep the racing rows even beyond the cap.
        for (k, row) in rest.iter().enumerate() {
            if k >= shown_end && !row.race {
                continue;
            }
            if k == shown_end && shown_end < rest.len() - 2 {
                let _ = writeln!(
                    o,
                    "<tr class=\"note\"><td colspan=\"{ncols}\">{} rows not shown</td></tr>",
                    rest.len() - 2 - shown_end
                );
            }
            if self
                .departure
                .as_ref()
                .is_some_and(|d| d.0 == self.prefix + k)
            {
                let _ = writeln!(
                    o,
                    "<tr class=\"departure\"><td colspan=\"{ncols}\">&#x2193; {}</td></tr>",
                    esc(&self.departure_text())
                );
            }
            self.html_row(&mut o, row);
        }
        o.push_str("</tbody></table>\n");
        let mut footer = esc(&self.footer_text()).replace('\n', "<br>\n");
        for note in self.stale_notes() {
            let _ = write!(footer, "<br>\n{}", esc(&note));
        }
        let _ = writeln!(o, "<footer><p>{footer}</p></footer>");
        // Machine-readable copy.
        let json = serde_json::json!({
            "race": r,
            "model": self.model,
            "prefix": self.prefix,
        });
        let json = serde_json::to_string(&json)
            .unwrap_or_else(|_| "null".into())
            .replace('<', "\\u003c");
        let _ = writeln!(
            o,
            "<script type=\"application/json\" id=\"jrace-witness\">{json}</script>"
        );
        let _ = writeln!(o, "<script>{JS}</script>\n</body>\n</html>");
        o
    }

    fn col_class(&self, c: usize) -> &'static str {
        if self.columns[c].racing {
            " class=\"racing\""
        } else {
            " class=\"other-thread\""
        }
    }

    fn html_row(&self, o: &mut String, row: &Row) {
        let mut cls = Vec::new();
        if row.race {
            cls.push("race");
        } else if row.overtakes {
            cls.push("overtakes");
        }
        if row.stale.is_some() {
            cls.push("stale");
        }
        let _ = write!(
            o,
            "<tr data-step=\"{}\" data-event=\"{}\"",
            row.step, row.event
        );
        if !cls.is_empty() {
            let _ = write!(o, " class=\"{}\"", cls.join(" "));
        }
        if row.race && row.step + 1 == self.rows.len() {
            o.push_str(" id=\"race-second\"");
        } else if row.race {
            o.push_str(" id=\"race\"");
        }
        if let Some(l) = &row.lock {
            let _ = write!(o, " data-lock=\"{}\"", esc(l));
        }
        let mark = if row.race {
            "<span class=\"label\">RACE</span>"
        } else if row.overtakes {
            "^"
        } else {
            ""
        };
        let _ = write!(
            o,
            "><td class=\"mark\">{mark}</td><td class=\"num\">{}</td><td class=\"num\">{}</td>",
            row.step, row.event
        );
        for c in 0..self.columns.len() {
            if c != row.column {
                let _ = write!(o, "<td{}></td>", self.col_class(c));
                continue;
            }
            let mut title = format!(
                "event {}, thread {}, {} at {}",
                row.event, row.thread, row.op, row.location
            );
            if let Some(m) = &row.method {
                let _ = write!(title, " in {m}");
            }
            let _ = write!(title, "; holds {} after it", braces(&row.locks));
            if row.stale.is_some() {
                title.push_str("; reads from another write than in the recording (see below)");
            }
            let base = if self.columns[c].racing {
                "racing"
            } else {
                "other-thread"
            };
            let _ = write!(
                o,
                "<td class=\"{base} {}\" title=\"{}\">",
                row.class,
                esc(&title)
            );
            if self.folded && c == self.ending {
                let _ = write!(o, "<span class=\"who\">{}:</span> ", esc(&row.thread));
            }
            let glyph = if row.stale.is_some() { "~" } else { "" };
            let _ = write!(o, "<code class=\"op\">{glyph}{}</code>", esc(&row.op));
            if !row.locks.is_empty() {
                let _ = write!(o, " {}", lock_badges(&row.locks));
            }
            o.push_str("</td>");
        }
        let at = match &row.method {
            Some(m) => format!(
                "{} <span class=\"method\">{}</span>",
                esc(&row.location),
                esc(m)
            ),
            None => esc(&row.location),
        };
        let _ = writeln!(o, "<td class=\"loc\">{at}</td></tr>");
    }
}

fn lock_badges(v: &[String]) -> String {
    if v.is_empty() {
        return "<span class=\"none\">{}</span>".into();
    }
    v.iter()
        .map(|l| format!("<span class=\"lock\" data-lock=\"{0}\">{0}</span>", esc(l)))
        .collect::<Vec<_>>()
        .join(" ")
}

// (A newline first, as the page has always had it.)
const CSS: &str = concat!("\n", include_str!("../html/witness.css"));
const JS: &str = concat!("\n", include_str!("../html/witness.js"));
