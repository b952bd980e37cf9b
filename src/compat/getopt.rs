//! Short options as C's getopt reads them, for the personalities of tools built on it
//! (netperf, netserver): `-p 12865` and `-p12865` are one option, and a word that is
//! not valid UTF-8 at a byte boundary never splits mid-character.

/// One option word: the flag (`-p`, or a `--long` word kept whole) and any value glued
/// to it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Opt<'a> {
    pub flag: &'a str,
    pub glued: Option<&'a str>,
}

/// Walks a word list option by option; values are taken with `value` or `optional`.
pub struct ShortOpts<'a> {
    words: &'a [String],
    next: usize,
}

impl<'a> ShortOpts<'a> {
    pub fn new(words: &'a [String]) -> Self {
        Self { words, next: 0 }
    }

    /// The next option word, split into flag and glued value.
    pub fn next_opt(&mut self) -> Option<Opt<'a>> {
        let word = self.words.get(self.next)?.as_str();
        self.next += 1;
        let split = word
            .strip_prefix('-')
            .filter(|rest| !rest.starts_with('-'))
            .and_then(|rest| rest.char_indices().nth(1))
            .map(|(at, _)| at + 1);
        Some(match split {
            Some(at) => Opt {
                flag: &word[..at],
                glued: Some(&word[at..]),
            },
            None => Opt {
                flag: word,
                glued: None,
            },
        })
    }

    /// The option's required value: glued, else the next word (None at the end).
    pub fn value(&mut self, opt: &Opt<'a>) -> Option<&'a str> {
        if opt.glued.is_some() {
            return opt.glued;
        }
        let word = self.words.get(self.next)?;
        self.next += 1;
        Some(word)
    }

    /// An optional value: glued, else the next word unless that is an option itself.
    pub fn optional(&mut self, opt: &Opt<'a>) -> Option<&'a str> {
        if opt.glued.is_some() {
            return opt.glued;
        }
        let word = self.words.get(self.next).filter(|w| !w.starts_with('-'))?;
        self.next += 1;
        Some(word)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(s: &[&str]) -> Vec<String> {
        s.iter().map(|w| w.to_string()).collect()
    }

    #[test]
    fn glued_and_separate_values_and_optional_ones() {
        let w = words(&[
            "-p12865", "-H", "host", "-c", "-C", "50", "--long", "-é9", "-",
        ]);
        let mut o = ShortOpts::new(&w);
        let p = o.next_opt().unwrap();
        assert_eq!((p.flag, o.value(&p)), ("-p", Some("12865")));
        let h = o.next_opt().unwrap();
        assert_eq!((h.flag, o.value(&h)), ("-H", Some("host")));
        let c = o.next_opt().unwrap();
        assert_eq!((c.flag, o.optional(&c)), ("-c", None));
        let c = o.next_opt().unwrap();
        assert_eq!((c.flag, o.optional(&c)), ("-C", Some("50")));
        assert_eq!(o.next_opt().unwrap().flag, "--long");
        let e = o.next_opt().unwrap();
        assert_eq!((e.flag, e.glued), ("-é", Some("9")));
        let dash = o.next_opt().unwrap();
        assert_eq!((dash.flag, o.value(&dash)), ("-", None));
        assert_eq!(o.next_opt(), None);
    }

    #[test]
    fn no_word_makes_it_panic() {
        for w in ["-", "--", "-é", "é", "-éé", "", "-\u{1F600}x", "x-"] {
            let list = words(&[w, w]);
            let mut o = ShortOpts::new(&list);
            while let Some(opt) = o.next_opt() {
                let _ = o.value(&opt);
            }
        }
    }
}
