//! Query strings and posted forms (`application/x-www-form-urlencoded`): decoded once,
//! read by name. A value that does not parse is a [`Bad`] naming the parameter, what it
//! got and what to give, which the app answers with a 400 page.

use plumb_store::TriageState;

/// A parameter with a value that cannot be used: the 400 page's text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Bad {
    /// The parameter.
    pub param: String,
    /// What was wrong and what to give instead.
    pub why: String,
}

impl std::fmt::Display for Bad {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "parameter `{}`: {}", self.param, self.why)
    }
}

fn bad(param: &str, why: String) -> Bad {
    Bad {
        param: param.to_string(),
        why,
    }
}

/// Decoded `name=value` pairs in the order given (a name may repeat: `id=1&id=2`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Params {
    pairs: Vec<(String, String)>,
}

/// Decodes one percent-encoded component (`+` is a space, as forms send it).
fn decode(raw: &str, what: &str) -> Result<String, Bad> {
    let b = raw.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'+' => out.push(b' '),
            b'%' => {
                let hex = b
                    .get(i + 1..i + 3)
                    .and_then(|h| std::str::from_utf8(h).ok())
                    .and_then(|h| u8::from_str_radix(h, 16).ok())
                    .ok_or_else(|| {
                        bad(
                            what,
                            "a `%` not followed by two hex digits; percent-encode the value \
                             (a space is %20 or +, a % is %25)"
                                .into(),
                        )
                    })?;
                out.push(hex);
                i += 2;
            }
            c => out.push(c),
        }
        i += 1;
    }
    String::from_utf8(out).map_err(|_| {
        bad(
            what,
            "not UTF-8 once decoded; send the value as UTF-8".into(),
        )
    })
}

impl Params {
    /// Parses `a=1&b=x+y&id=2&id=3` (no leading `?`); empty pieces are skipped.
    pub fn parse(query: &str) -> Result<Params, Bad> {
        let mut pairs = Vec::new();
        for piece in query.split('&').filter(|p| !p.is_empty()) {
            let (k, v) = piece.split_once('=').unwrap_or((piece, ""));
            let name = decode(k, k)?;
            let value = decode(v, &name)?;
            pairs.push((name, value));
        }
        Ok(Params { pairs })
    }

    /// The first value of `name`, trimmed, unless empty (an empty form field is "not set").
    pub fn get(&self, name: &str) -> Option<&str> {
        self.pairs
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.trim())
            .filter(|v| !v.is_empty())
    }

    /// The first value of `name` as an owned string.
    pub fn text(&self, name: &str) -> Option<String> {
        self.get(name).map(str::to_string)
    }

    /// Every non-empty value of `name`, in order.
    pub fn all(&self, name: &str) -> Vec<&str> {
        self.pairs
            .iter()
            .filter(|(k, _)| k == name)
            .map(|(_, v)| v.trim())
            .filter(|v| !v.is_empty())
            .collect()
    }

    /// An integer parameter; `what` says what a good value is ("a run id").
    pub fn int(&self, name: &str, what: &str) -> Result<Option<i64>, Bad> {
        self.get(name)
            .map(|v| {
                v.parse::<i64>()
                    .map_err(|_| bad(name, format!("{v:?} is not {what}; give a whole number")))
            })
            .transpose()
    }

    /// Every value of `name` as integers (`id=3&id=4`).
    pub fn ints(&self, name: &str, what: &str) -> Result<Vec<i64>, Bad> {
        self.all(name)
            .into_iter()
            .map(|v| {
                v.parse::<i64>()
                    .map_err(|_| bad(name, format!("{v:?} is not {what}; give a whole number")))
            })
            .collect()
    }

    /// `page`, from 1 (absent: 1).
    pub fn page(&self) -> Result<usize, Bad> {
        match self.get("page") {
            None => Ok(1),
            Some(v) => match v.parse::<usize>() {
                Ok(n) if (1..=1_000_000).contains(&n) => Ok(n),
                _ => Err(bad(
                    "page",
                    format!("{v:?} is not a page number; give a whole number from 1"),
                )),
            },
        }
    }

    /// A day, `YYYY-MM-DD`.
    pub fn date(&self, name: &str) -> Result<Option<String>, Bad> {
        let Some(v) = self.get(name) else {
            return Ok(None);
        };
        let ok = v.len() == 10
            && v.char_indices().all(|(i, c)| {
                if i == 4 || i == 7 {
                    c == '-'
                } else {
                    c.is_ascii_digit()
                }
            })
            && matches!(v[5..7].parse::<u32>(), Ok(1..=12))
            && matches!(v[8..10].parse::<u32>(), Ok(1..=31));
        if !ok {
            return Err(bad(
                name,
                format!("{v:?} is not a day; give one as YYYY-MM-DD (e.g. 2026-01-31)"),
            ));
        }
        Ok(Some(v.to_string()))
    }

    /// A percentage in (0, 100].
    pub fn percent(&self, name: &str, default: f64) -> Result<f64, Bad> {
        match self.get(name) {
            None => Ok(default),
            Some(v) => match v.trim_end_matches('%').parse::<f64>() {
                Ok(x) if x > 0.0 && x <= 100.0 => Ok(x),
                _ => Err(bad(
                    name,
                    format!("{v:?} is not a percentage; give a number above 0 and at most 100"),
                )),
            },
        }
    }

    /// A triage state (`untriaged`, `investigating`, `expected`, `fixed`, `not-a-change`).
    pub fn state(&self, name: &str) -> Result<Option<TriageState>, Bad> {
        self.get(name)
            .map(|v| v.parse::<TriageState>().map_err(|e| bad(name, e)))
            .transpose()
    }

    /// A run status (`running`, `ok`, `failed`, `interrupted`).
    pub fn status(&self, name: &str) -> Result<Option<plumb_core::RunStatus>, Bad> {
        self.get(name)
            .map(|v| {
                v.parse::<plumb_core::RunStatus>().map_err(|_| {
                    bad(
                        name,
                        format!(
                            "{v:?} is not a run status; give running, ok, failed or interrupted"
                        ),
                    )
                })
            })
            .transpose()
    }

    /// Whether the page is asked for as JSON (`format=json`); any other format is refused.
    pub fn json(&self) -> Result<bool, Bad> {
        match self.get("format") {
            None | Some("html") => Ok(false),
            Some("json") => Ok(true),
            Some(v) => Err(bad(
                "format",
                format!("{v:?} is not a page format; give json (or html, the default)"),
            )),
        }
    }

    /// The query string of these parameters with `name` set to `value` (others kept, in
    /// order), for links to the next page or a narrowed filter.
    pub fn with(&self, name: &str, value: &str) -> String {
        let mut parts: Vec<String> = self
            .pairs
            .iter()
            .filter(|(k, v)| k != name && !v.trim().is_empty())
            .map(|(k, v)| format!("{}={}", encode(k), encode(v)))
            .collect();
        if !value.is_empty() {
            parts.push(format!("{}={}", encode(name), encode(value)));
        }
        parts.join("&")
    }
}

/// Percent-encodes a query component (unreserved characters kept).
pub fn encode(s: &str) -> String {
    let mut o = String::with_capacity(s.len());
    for b in s.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.' | b'~') {
            o.push(b as char);
        } else {
            o.push_str(&format!("%{b:02X}"));
        }
    }
    o
}

#[cfg(test)]
mod unit {
    use super::*;

    #[test]
    fn pairs_decode_with_plus_and_percent_and_repeat() {
        let p = Params::parse("id=3&id=4&note=a+b%20c%26d&state=expected&empty=&x").unwrap();
        assert_eq!(p.ints("id", "a change id").unwrap(), vec![3, 4]);
        assert_eq!(p.get("note"), Some("a b c&d"));
        assert_eq!(p.state("state").unwrap(), Some(TriageState::Expected));
        assert_eq!(p.get("empty"), None);
        assert_eq!(p.get("x"), None);
        assert_eq!(p.get("missing"), None);
    }

    #[test]
    fn a_broken_escape_names_its_parameter() {
        let e = Params::parse("tag=abc%zz").unwrap_err();
        assert_eq!(e.param, "tag");
        assert!(e.why.contains("hex"), "{e}");
        let e = Params::parse("tag=%ff").unwrap_err();
        assert!(e.why.contains("UTF-8"), "{e}");
    }

    #[test]
    fn a_malformed_page_or_day_or_state_says_what_to_give() {
        for q in ["page=abc", "page=0", "page=-2", "page=1.5"] {
            let e = Params::parse(q).unwrap().page().unwrap_err();
            assert_eq!(e.param, "page", "{q}");
            assert!(e.why.contains("from 1"), "{e}");
        }
        assert_eq!(Params::parse("page=3").unwrap().page().unwrap(), 3);
        assert_eq!(Params::parse("").unwrap().page().unwrap(), 1);
        let e = Params::parse("since=2026-13-01")
            .unwrap()
            .date("since")
            .unwrap_err();
        assert!(e.why.contains("YYYY-MM-DD"), "{e}");
        assert_eq!(
            Params::parse("since=2026-02-01")
                .unwrap()
                .date("since")
                .unwrap(),
            Some("2026-02-01".into())
        );
        let e = Params::parse("state=done")
            .unwrap()
            .state("state")
            .unwrap_err();
        assert!(e.why.contains("not-a-change"), "{e}");
        let e = Params::parse("format=xml").unwrap().json().unwrap_err();
        assert_eq!(e.param, "format");
    }

    #[test]
    fn links_keep_the_other_parameters_and_encode_values() {
        let p = Params::parse("tag=a+b&page=2&engine=rocksdb").unwrap();
        assert_eq!(p.with("page", "3"), "tag=a%20b&engine=rocksdb&page=3");
        assert_eq!(p.with("page", ""), "tag=a%20b&engine=rocksdb");
        assert_eq!(
            Params::parse(&p.with("tag", "<x>&y")).unwrap().get("tag"),
            Some("<x>&y")
        );
    }
}
