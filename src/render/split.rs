//! One splitter for every platform's message limit, by characters or by bytes.

/// What a platform's limit counts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unit {
    /// Characters (Telegram, Discord).
    Chars,
    /// UTF-8 bytes (WeCom).
    Bytes,
}

/// Splits `text` into messages of at most `max` units at line boundaries; a single
/// longer line is cut at a character boundary. Parts are trimmed at the end and empty
/// ones dropped.
pub fn split(text: &str, max: usize, unit: Unit) -> Vec<String> {
    let size = |s: &str| match unit {
        Unit::Chars => s.chars().count(),
        Unit::Bytes => s.len(),
    };
    // The byte offset in `s` after at most `n` units (at least one character, so a
    // limit below one character still makes progress).
    let cut_at = |s: &str, n: usize| -> usize {
        let end = match unit {
            Unit::Chars => s.char_indices().nth(n).map_or(s.len(), |(i, _)| i),
            Unit::Bytes => {
                let mut i = n.min(s.len());
                while !s.is_char_boundary(i) {
                    i -= 1;
                }
                i
            }
        };
        if end == 0 {
            s.chars().next().map_or(0, char::len_utf8)
        } else {
            end
        }
    };
    let max = max.max(1);
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut cur_len = 0;
    for line in text.split_inclusive('\n') {
        let mut line = line;
        let mut len = size(line);
        while len > max {
            if !cur.is_empty() {
                out.push(std::mem::take(&mut cur));
                cur_len = 0;
            }
            let cut = cut_at(line, max);
            out.push(line[..cut].to_string());
            line = &line[cut..];
            len = size(line);
        }
        if cur_len + len > max {
            out.push(std::mem::take(&mut cur));
            cur_len = 0;
        }
        cur_len += len;
        cur.push_str(line);
    }
    if !cur.is_empty() {
        out.push(cur);
    }
    out.into_iter()
        .map(|s| s.trim_end().to_string())
        .filter(|s| !s.is_empty())
        .collect()
}

/// [`split`] by characters.
pub fn split_message(text: &str, max: usize) -> Vec<String> {
    split(text, max, Unit::Chars)
}

/// [`split`] by bytes.
pub fn split_bytes(text: &str, max: usize) -> Vec<String> {
    split(text, max, Unit::Bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splits_on_lines_within_limits() {
        let text = "line of text\n".repeat(1000);
        for max in [4096, 2000] {
            let parts = split_message(&text, max);
            assert!(parts.len() > 1);
            assert!(parts.iter().all(|p| p.chars().count() <= max));
            assert!(parts.iter().all(|p| p.ends_with("line of text")));
        }
        let long = "长".repeat(5000);
        let parts = split_message(&long, 2000);
        assert_eq!(parts.len(), 3);
        assert!(parts.iter().all(|p| p.chars().count() <= 2000));
    }

    #[test]
    fn splits_at_lines_within_bytes() {
        let text = "一二三\nabc\n".repeat(400);
        let parts = split_bytes(&text, 2048);
        assert!(parts.len() > 1);
        assert!(parts.iter().all(|p| p.len() <= 2048));
        assert!(parts.iter().all(|p| p.ends_with("abc")));
        let long = "长".repeat(3000);
        let parts = split_bytes(&long, 2048);
        assert!(parts.iter().all(|p| p.len() <= 2048));
        assert_eq!(parts.concat(), long, "nothing lost at the cuts");
    }
}
