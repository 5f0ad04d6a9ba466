//! The label selector lexer and recursive-descent parser, following `labels/selector.go`.

use std::collections::BTreeSet;

use serde_json::json;

use super::{LabelsError, Operator, Requirement};
use crate::field::FieldError;
use crate::validation::is_qualified_name;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Token {
    Error,
    EndOfString,
    ClosedPar,
    Comma,
    DoesNotExist,
    DoubleEquals,
    Equals,
    GreaterThan,
    Identifier,
    In,
    LessThan,
    NotEquals,
    NotIn,
    OpenPar,
}

fn keyword(s: &str) -> Option<Token> {
    Some(match s {
        ")" => Token::ClosedPar,
        "," => Token::Comma,
        "!" => Token::DoesNotExist,
        "==" => Token::DoubleEquals,
        "=" => Token::Equals,
        ">" => Token::GreaterThan,
        "in" => Token::In,
        "<" => Token::LessThan,
        "!=" => Token::NotEquals,
        "notin" => Token::NotIn,
        "(" => Token::OpenPar,
        _ => return None,
    })
}

fn is_whitespace(c: u8) -> bool {
    matches!(c, b' ' | b'\t' | b'\r' | b'\n')
}

fn is_special(c: u8) -> bool {
    matches!(c, b'=' | b'!' | b'(' | b')' | b',' | b'>' | b'<')
}

fn lex(input: &str) -> Vec<(Token, String)> {
    let bytes = input.as_bytes();
    let mut pos = 0;
    let mut out = Vec::new();
    loop {
        while pos < bytes.len() && is_whitespace(bytes[pos]) {
            pos += 1;
        }
        if pos >= bytes.len() {
            out.push((Token::EndOfString, String::new()));
            return out;
        }
        if is_special(bytes[pos]) {
            let start = pos;
            let mut last: Option<(Token, usize)> = None;
            while pos < bytes.len() && is_special(bytes[pos]) {
                let candidate = &input[start..=pos];
                if let Some(tok) = keyword(candidate) {
                    last = Some((tok, pos + 1));
                } else if last.is_some() {
                    break;
                }
                pos += 1;
            }
            match last {
                Some((tok, end)) => {
                    out.push((tok, input[start..end].to_string()));
                    pos = end;
                }
                None => {
                    out.push((
                        Token::Error,
                        format!("error expected: keyword found '{}'", &input[start..pos]),
                    ));
                    return out;
                }
            }
        } else {
            let start = pos;
            while pos < bytes.len() && !is_whitespace(bytes[pos]) && !is_special(bytes[pos]) {
                pos += 1;
            }
            let lit = &input[start..pos];
            let tok = keyword(lit).unwrap_or(Token::Identifier);
            out.push((tok, lit.to_string()));
        }
    }
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Context {
    KeyAndOperator,
    Values,
}

struct Parser {
    items: Vec<(Token, String)>,
    position: usize,
}

type PResult<T> = Result<T, String>;

impl Parser {
    fn lookahead(&self, ctx: Context) -> (Token, String) {
        let (mut tok, lit) = self
            .items
            .get(self.position)
            .cloned()
            .unwrap_or((Token::EndOfString, String::new()));
        if ctx == Context::Values && matches!(tok, Token::In | Token::NotIn) {
            tok = Token::Identifier;
        }
        (tok, lit)
    }

    fn consume(&mut self, ctx: Context) -> (Token, String) {
        let item = self.lookahead(ctx);
        if self.position < self.items.len() {
            self.position += 1;
        }
        item
    }

    fn parse(&mut self) -> Result<Vec<Requirement>, LabelsError> {
        let mut reqs = Vec::new();
        loop {
            let (tok, lit) = self.lookahead(Context::Values);
            match tok {
                Token::Identifier | Token::DoesNotExist => {
                    let r = self.parse_requirement().map_err(|e| {
                        LabelsError::Parse(format!("unable to parse requirement: {e}"))
                    })?;
                    reqs.push(r);
                    let (t, l) = self.consume(Context::Values);
                    match t {
                        Token::EndOfString => return Ok(reqs),
                        Token::Comma => {
                            let (t2, l2) = self.lookahead(Context::Values);
                            if t2 != Token::Identifier && t2 != Token::DoesNotExist {
                                return Err(LabelsError::Parse(format!(
                                    "found '{l2}', expected: identifier after ','"
                                )));
                            }
                        }
                        _ => {
                            return Err(LabelsError::Parse(format!(
                                "found '{l}', expected: ',' or 'end of string'"
                            )));
                        }
                    }
                }
                Token::EndOfString => return Ok(reqs),
                _ => {
                    return Err(LabelsError::Parse(format!(
                        "found '{lit}', expected: !, identifier, or 'end of string'"
                    )));
                }
            }
        }
    }

    fn parse_requirement(&mut self) -> PResult<Requirement> {
        let (key, op) = self.parse_key_and_infer_operator()?;
        if let Some(op @ (Operator::Exists | Operator::DoesNotExist)) = op {
            return Requirement::new(&key, op, Vec::new()).map_err(|e| e.to_string());
        }
        let op = self.parse_operator()?;
        let values = match op {
            Operator::In | Operator::NotIn => self.parse_values()?,
            _ => self.parse_exact_value()?,
        };
        Requirement::new(&key, op, values.into_iter().collect()).map_err(|e| e.to_string())
    }

    fn parse_key_and_infer_operator(&mut self) -> PResult<(String, Option<Operator>)> {
        let mut op = None;
        let (mut tok, mut lit) = self.consume(Context::Values);
        if tok == Token::DoesNotExist {
            op = Some(Operator::DoesNotExist);
            (tok, lit) = self.consume(Context::Values);
        }
        if tok != Token::Identifier {
            return Err(format!("found '{lit}', expected: identifier"));
        }
        let errs = is_qualified_name(&lit);
        if !errs.is_empty() {
            return Err(FieldError::invalid("<nil>", json!(lit), errs.join("; ")).to_string());
        }
        let (t, _) = self.lookahead(Context::Values);
        if matches!(t, Token::EndOfString | Token::Comma) && op.is_none() {
            op = Some(Operator::Exists);
        }
        Ok((lit, op))
    }

    fn parse_operator(&mut self) -> PResult<Operator> {
        let (tok, lit) = self.consume(Context::KeyAndOperator);
        Ok(match tok {
            Token::In => Operator::In,
            Token::Equals => Operator::Equals,
            Token::DoubleEquals => Operator::DoubleEquals,
            Token::GreaterThan => Operator::GreaterThan,
            Token::LessThan => Operator::LessThan,
            Token::NotIn => Operator::NotIn,
            Token::NotEquals => Operator::NotEquals,
            _ => {
                return Err(format!(
                    "found '{lit}', expected: in, notin, =, ==, !=, gt, lt"
                ));
            }
        })
    }

    fn parse_values(&mut self) -> PResult<BTreeSet<String>> {
        let (tok, lit) = self.consume(Context::Values);
        if tok != Token::OpenPar {
            return Err(format!("found '{lit}' expected: '('"));
        }
        let (tok, lit) = self.lookahead(Context::Values);
        match tok {
            Token::Identifier | Token::Comma => {
                let set = self.parse_identifiers_list()?;
                let (tok, _) = self.consume(Context::Values);
                if tok != Token::ClosedPar {
                    return Err(format!("found '{lit}', expected: ')'"));
                }
                Ok(set)
            }
            Token::ClosedPar => {
                self.consume(Context::Values);
                Ok(BTreeSet::from([String::new()]))
            }
            _ => Err(format!("found '{lit}', expected: ',', ')' or identifier")),
        }
    }

    fn parse_identifiers_list(&mut self) -> PResult<BTreeSet<String>> {
        let mut set = BTreeSet::new();
        loop {
            let (tok, lit) = self.consume(Context::Values);
            match tok {
                Token::Identifier => {
                    set.insert(lit);
                    let (tok2, lit2) = self.lookahead(Context::Values);
                    match tok2 {
                        Token::Comma => continue,
                        Token::ClosedPar => return Ok(set),
                        _ => return Err(format!("found '{lit2}', expected: ',' or ')'")),
                    }
                }
                Token::Comma => {
                    if set.is_empty() {
                        set.insert(String::new());
                    }
                    let (tok2, _) = self.lookahead(Context::Values);
                    if tok2 == Token::ClosedPar {
                        set.insert(String::new());
                        return Ok(set);
                    }
                    if tok2 == Token::Comma {
                        self.consume(Context::Values);
                        set.insert(String::new());
                    }
                }
                _ => return Err(format!("found '{lit}', expected: ',', or identifier")),
            }
        }
    }

    fn parse_exact_value(&mut self) -> PResult<BTreeSet<String>> {
        let (tok, _) = self.lookahead(Context::Values);
        if matches!(tok, Token::EndOfString | Token::Comma) {
            return Ok(BTreeSet::from([String::new()]));
        }
        let (tok, lit) = self.consume(Context::Values);
        if tok == Token::Identifier {
            return Ok(BTreeSet::from([lit]));
        }
        Err(format!("found '{lit}', expected: identifier"))
    }
}

/// Parses a selector string into requirements (unsorted).
pub(super) fn parse(input: &str) -> Result<Vec<Requirement>, LabelsError> {
    let mut p = Parser {
        items: lex(input),
        position: 0,
    };
    p.parse()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lexer_longest_match() {
        let toks: Vec<Token> = lex("a!=b,c==d,!e =! x")
            .into_iter()
            .map(|(t, _)| t)
            .collect();
        assert_eq!(
            toks,
            vec![
                Token::Identifier,
                Token::NotEquals,
                Token::Identifier,
                Token::Comma,
                Token::Identifier,
                Token::DoubleEquals,
                Token::Identifier,
                Token::Comma,
                Token::DoesNotExist,
                Token::Identifier,
                Token::Equals,
                Token::DoesNotExist,
                Token::Identifier,
                Token::EndOfString,
            ]
        );
    }

    #[test]
    fn lexer_error_token() {
        // '<' followed by '=' is "<" then "="; an unknown special run cannot happen with this
        // alphabet, but parse must reject junk gracefully.
        assert!(parse("a<=1").is_err());
        assert!(parse("((").is_err());
    }
}
