//! A tiny, non-validating XML reader and writer for the flat documents WeCom sends
//! and expects (`<xml><Field><![CDATA[...]]></Field>...</xml>`).
//!
//! It understands elements, attributes (skipped), text with the five predefined
//! entities and numeric character references, CDATA sections, comments and
//! processing instructions. DOCTYPE declarations are rejected, so there is no
//! entity expansion. Nesting depth is bounded; nothing here panics on any input.

use super::error::WecomError;

/// Deepest element nesting accepted; deeper documents are `BadXml`.
const MAX_DEPTH: usize = 32;

/// One parsed element: its name, its own text (CDATA and character data directly
/// inside it, entities decoded) and its child elements in document order.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Element {
    /// Tag name, e.g. `Encrypt`.
    pub name: String,
    /// Text directly inside this element. When the element holds a CDATA section,
    /// whitespace-only character data around it is dropped, so
    /// `<A> <![CDATA[x]]> </A>` has text `x`.
    pub text: String,
    /// Child elements, in order.
    pub children: Vec<Element>,
}

impl Element {
    /// The first child named `name`.
    pub fn child(&self, name: &str) -> Option<&Element> {
        self.children.iter().find(|c| c.name == name)
    }

    /// The text of the first child named `name`.
    pub fn child_text(&self, name: &str) -> Option<&str> {
        self.child(name).map(|c| c.text.as_str())
    }
}

/// Parses a whole document and returns its root element. Leading BOM, XML
/// declaration, comments and whitespace are allowed before and after the root;
/// anything else is `BadXml`.
pub fn parse(input: &str) -> Result<Element, WecomError> {
    let mut p = Parser { s: input, pos: 0 };
    if p.rest().starts_with('\u{feff}') {
        p.pos += '\u{feff}'.len_utf8();
    }
    p.skip_misc()?;
    if !p.rest().starts_with('<') {
        return Err(bad("expected root element"));
    }
    let root = p.element(0)?;
    p.skip_misc()?;
    if !p.rest().is_empty() {
        return Err(bad("content after root element"));
    }
    Ok(root)
}

/// Wraps `s` in a CDATA section, splitting any `]]>` inside it so the section
/// cannot be closed early (`]]>` becomes `]]]]><![CDATA[>`).
pub fn cdata(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 12);
    out.push_str("<![CDATA[");
    out.push_str(&s.replace("]]>", "]]]]><![CDATA[>"));
    out.push_str("]]>");
    out
}

fn bad(msg: &str) -> WecomError {
    WecomError::BadXml(msg.to_string())
}

struct Parser<'a> {
    s: &'a str,
    pos: usize,
}

impl<'a> Parser<'a> {
    fn rest(&self) -> &'a str {
        self.s.get(self.pos..).unwrap_or("")
    }

    /// Moves past `n` bytes; `n` always ends on an ASCII delimiter we found.
    fn advance(&mut self, n: usize) {
        self.pos = self.pos.saturating_add(n).min(self.s.len());
    }

    fn skip_ws(&mut self) {
        let r = self.rest();
        let trimmed = r.trim_start_matches([' ', '\t', '\r', '\n']);
        self.advance(r.len() - trimmed.len());
    }

    /// Skips `start ... end`, returning what was between; error if `end` is missing.
    fn take_delimited(
        &mut self,
        start: &str,
        end: &str,
        what: &str,
    ) -> Result<&'a str, WecomError> {
        let body = self.rest().get(start.len()..).unwrap_or("");
        let Some(i) = body.find(end) else {
            return Err(bad(&format!("unterminated {what}")));
        };
        let inner = body.get(..i).unwrap_or("");
        self.advance(start.len() + i + end.len());
        Ok(inner)
    }

    /// Skips whitespace, comments and processing instructions outside the root.
    fn skip_misc(&mut self) -> Result<(), WecomError> {
        loop {
            self.skip_ws();
            let r = self.rest();
            if r.starts_with("<?") {
                self.take_delimited("<?", "?>", "processing instruction")?;
            } else if r.starts_with("<!--") {
                self.take_delimited("<!--", "-->", "comment")?;
            } else if r.starts_with("<!") {
                return Err(bad("DOCTYPE and declarations are not supported"));
            } else {
                return Ok(());
            }
        }
    }

    fn name(&mut self) -> Result<&'a str, WecomError> {
        let r = self.rest();
        let end = r
            .find(|c: char| !(c.is_alphanumeric() || matches!(c, '_' | '-' | '.' | ':')))
            .unwrap_or(r.len());
        if end == 0 {
            return Err(bad("expected a name"));
        }
        let name = r.get(..end).unwrap_or("");
        self.advance(end);
        Ok(name)
    }

    /// Parses one element starting at `<`.
    fn element(&mut self, depth: usize) -> Result<Element, WecomError> {
        if depth >= MAX_DEPTH {
            return Err(bad("nesting too deep"));
        }
        self.advance(1); // '<'
        let name = self.name()?.to_string();
        // Attributes: skipped, but their syntax is checked enough to find the tag end.
        loop {
            self.skip_ws();
            let r = self.rest();
            if r.starts_with("/>") {
                self.advance(2);
                return Ok(Element {
                    name,
                    ..Element::default()
                });
            }
            if r.starts_with('>') {
                self.advance(1);
                break;
            }
            if r.is_empty() {
                return Err(bad("unterminated start tag"));
            }
            self.name()?;
            self.skip_ws();
            if !self.rest().starts_with('=') {
                return Err(bad("expected '=' in attribute"));
            }
            self.advance(1);
            self.skip_ws();
            let quote = match self.rest().chars().next() {
                Some(q @ ('"' | '\'')) => q,
                _ => return Err(bad("expected quoted attribute value")),
            };
            let after = self.rest().get(1..).unwrap_or("");
            let Some(i) = after.find(quote) else {
                return Err(bad("unterminated attribute value"));
            };
            self.advance(1 + i + 1);
        }

        let mut cdata_text = String::new();
        let mut plain_text = String::new();
        let mut has_cdata = false;
        let mut children = Vec::new();
        loop {
            let r = self.rest();
            if r.is_empty() {
                return Err(bad(&format!("unclosed element <{name}>")));
            }
            if r.starts_with("<![CDATA[") {
                let inner = self.take_delimited("<![CDATA[", "]]>", "CDATA section")?;
                has_cdata = true;
                cdata_text.push_str(inner);
                plain_text.push_str(inner);
            } else if r.starts_with("<!--") {
                self.take_delimited("<!--", "-->", "comment")?;
            } else if r.starts_with("<?") {
                self.take_delimited("<?", "?>", "processing instruction")?;
            } else if r.starts_with("<!") {
                return Err(bad("unexpected declaration"));
            } else if r.starts_with("</") {
                self.advance(2);
                let close = self.name()?;
                if close != name {
                    return Err(bad(&format!("</{close}> closes <{name}>")));
                }
                self.skip_ws();
                if !self.rest().starts_with('>') {
                    return Err(bad("unterminated end tag"));
                }
                self.advance(1);
                let text = if has_cdata { cdata_text } else { plain_text };
                return Ok(Element {
                    name,
                    text,
                    children,
                });
            } else if r.starts_with('<') {
                children.push(self.element(depth + 1)?);
            } else {
                let end = r.find('<').unwrap_or(r.len());
                let raw = r.get(..end).unwrap_or("");
                self.advance(end);
                let decoded = decode_entities(raw)?;
                if !decoded.trim().is_empty() {
                    cdata_text.push_str(&decoded);
                }
                plain_text.push_str(&decoded);
            }
        }
    }
}

/// Decodes `&lt; &gt; &amp; &quot; &apos; &#N; &#xH;`; any other `&` is `BadXml`.
fn decode_entities(raw: &str) -> Result<String, WecomError> {
    if !raw.contains('&') {
        return Ok(raw.to_string());
    }
    let mut out = String::with_capacity(raw.len());
    let mut rest = raw;
    while let Some(i) = rest.find('&') {
        out.push_str(rest.get(..i).unwrap_or(""));
        let after = rest.get(i + 1..).unwrap_or("");
        let Some(semi) = after.find(';') else {
            return Err(bad("unterminated entity"));
        };
        let ent = after.get(..semi).unwrap_or("");
        let ch = match ent {
            "lt" => '<',
            "gt" => '>',
            "amp" => '&',
            "quot" => '"',
            "apos" => '\'',
            _ => {
                let code = if let Some(hex) = ent.strip_prefix("#x").or(ent.strip_prefix("#X")) {
                    u32::from_str_radix(hex, 16).ok()
                } else if let Some(dec) = ent.strip_prefix('#') {
                    dec.parse::<u32>().ok()
                } else {
                    None
                };
                code.and_then(char::from_u32)
                    .ok_or_else(|| bad(&format!("unknown entity &{ent};")))?
            }
        };
        out.push(ch);
        rest = after.get(semi + 1..).unwrap_or("");
    }
    out.push_str(rest);
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_flat_document_with_cdata_and_entities() {
        let doc = "<?xml version=\"1.0\"?>\n<xml a=\"1\" b='2'>\n <A><![CDATA[x<y]]></A>\n \
                   <B> 12 </B><C> <![CDATA[p]]> </C><D>&lt;&amp;&#65;&#x42;</D><E/>\
                   <!-- c --><F><G>deep</G></F></xml>\n";
        let root = parse(doc).unwrap();
        assert_eq!(root.name, "xml");
        assert_eq!(root.child_text("A"), Some("x<y"));
        assert_eq!(root.child_text("B"), Some(" 12 "));
        assert_eq!(root.child_text("C"), Some("p"));
        assert_eq!(root.child_text("D"), Some("<&AB"));
        assert_eq!(root.child_text("E"), Some(""));
        assert_eq!(
            root.child("F").and_then(|f| f.child_text("G")),
            Some("deep")
        );
        assert_eq!(root.child_text("Z"), None);
    }

    #[test]
    fn split_cdata_round_trips() {
        let s = "a]]>b]]]>c";
        let doc = format!("<xml><X>{}</X></xml>", cdata(s));
        assert_eq!(parse(&doc).unwrap().child_text("X"), Some(s));
    }

    #[test]
    fn rejects_malformed() {
        for doc in [
            "",
            "plain",
            "<xml>",
            "<xml><A>1</B></xml>",
            "<xml><A><![CDATA[x</A></xml>",
            "<xml></xml>trailing",
            "<!DOCTYPE x [<!ENTITY a 'b'>]><xml/>",
            "<xml>&bogus;</xml>",
            "<xml>&#xD800;</xml>",
            "<xml a=1></xml>",
            "<xml a=\"1></xml>",
            "<>",
            "<xml><!-- open</xml>",
        ] {
            assert!(matches!(parse(doc), Err(WecomError::BadXml(_))), "{doc:?}");
        }
        let deep = format!("{}{}", "<a>".repeat(100), "</a>".repeat(100));
        assert!(matches!(parse(&deep), Err(WecomError::BadXml(_))));
    }
}
