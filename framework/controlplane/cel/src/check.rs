//! Compile-time checks cel-rust leaves to evaluation: undeclared identifiers and functions,
//! and a literal result of the wrong type. Errors are rendered like cel-go's issues.

use std::collections::BTreeSet;
use std::sync::Arc;

use cel::common::ast::{EntryExpr, Expr, IdedExpr, LiteralValue};
use cel::{ExecutionError, ParseErrors, Program};

/// Names that resolve to types rather than variables (`type(x) == int`).
const TYPE_NAMES: &[&str] = &[
    "bool",
    "bytes",
    "double",
    "dyn",
    "int",
    "list",
    "map",
    "null_type",
    "string",
    "type",
    "uint",
];

/// Renders cel-rust's parse errors in cel-go's format.
pub(crate) fn render_parse_errors(source: &str, errors: &ParseErrors) -> String {
    let rendered: Vec<String> = errors
        .errors
        .iter()
        .map(|e| {
            let (line, col) = (e.pos.0.max(1) as usize, e.pos.1.max(1) as usize);
            issue(source, line, col, &e.msg)
        })
        .collect();
    rendered.join("\n")
}

/// One issue: `ERROR: <input>:L:C: msg`, the source line and a caret under the column.
fn issue(source: &str, line: usize, col: usize, msg: &str) -> String {
    let mut s = format!("ERROR: <input>:{line}:{col}: {msg}");
    if let Some(text) = source.lines().nth(line - 1) {
        s.push_str(&format!("\n | {text}\n | {}^", ".".repeat(col - 1)));
    }
    s
}

/// Line and 1-based column of a byte offset.
fn position(source: &str, offset: usize) -> (usize, usize) {
    let before = &source[..offset.min(source.len())];
    let line = before.matches('\n').count() + 1;
    let col = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
    (line, col)
}

struct Checker<'a> {
    env: &'a Arc<cel::Env>,
    program: &'a Program,
    source: &'a str,
    used: BTreeSet<String>,
    issues: Vec<String>,
}

/// Checks a parsed program; returns the declared variables it uses.
pub(crate) fn check(
    env: &Arc<cel::Env>,
    program: &Program,
    source: &str,
    variables: &[&str],
    bool_result: bool,
) -> Result<BTreeSet<String>, String> {
    let mut c = Checker {
        env,
        program,
        source,
        used: BTreeSet::new(),
        issues: Vec::new(),
    };
    let scope: Vec<String> = variables.iter().map(|v| v.to_string()).collect();
    c.walk(program.expression(), &scope, variables);
    if !c.issues.is_empty() {
        return Err(c.issues.join("\n"));
    }
    if bool_result
        && let Expr::Literal(l) = &program.expression().expr
        && !matches!(l, LiteralValue::Boolean(_))
    {
        return Err("cel expression must evaluate to a bool".to_string());
    }
    Ok(c.used)
}

impl Checker<'_> {
    fn report(&mut self, e: &IdedExpr, name: &str) {
        let offset = self
            .program
            .source_info()
            .offset_for(e.id)
            .map_or(0, |(start, _)| start as usize);
        let (line, col) = position(self.source, offset);
        let msg = format!("undeclared reference to '{name}' (in container '')");
        let text = issue(self.source, line, col, &msg);
        if !self.issues.contains(&text) {
            self.issues.push(text);
        }
    }

    fn walk(&mut self, e: &IdedExpr, scope: &[String], declared: &[&str]) {
        match &e.expr {
            Expr::Unspecified | Expr::Literal(_) => {}
            Expr::Ident(name) => {
                if name.starts_with('@') || scope.iter().any(|s| s == name) {
                    if declared.contains(&name.as_str()) {
                        self.used.insert(name.clone());
                    }
                } else if !TYPE_NAMES.contains(&name.as_str()) {
                    self.report(e, name);
                }
            }
            Expr::Select(s) => self.walk(&s.operand, scope, declared),
            Expr::List(l) => {
                for item in &l.elements {
                    self.walk(item, scope, declared);
                }
            }
            Expr::Map(m) => {
                for entry in &m.entries {
                    match &entry.expr {
                        EntryExpr::StructField(f) => self.walk(&f.value, scope, declared),
                        EntryExpr::MapEntry(me) => {
                            self.walk(&me.key, scope, declared);
                            self.walk(&me.value, scope, declared);
                        }
                    }
                }
            }
            Expr::Struct(s) => {
                for entry in &s.entries {
                    match &entry.expr {
                        EntryExpr::StructField(f) => self.walk(&f.value, scope, declared),
                        EntryExpr::MapEntry(me) => {
                            self.walk(&me.key, scope, declared);
                            self.walk(&me.value, scope, declared);
                        }
                    }
                }
            }
            Expr::Comprehension(c) => {
                self.walk(&c.iter_range, scope, declared);
                self.walk(&c.accu_init, scope, declared);
                let mut inner = scope.to_vec();
                inner.push(c.iter_var.clone());
                inner.extend(c.iter_var2.clone());
                inner.push(c.accu_var.clone());
                self.walk(&c.loop_cond, &inner, declared);
                self.walk(&c.loop_step, &inner, declared);
                self.walk(&c.result, &inner, declared);
            }
            Expr::Call(call) => {
                let name = call.func_name.as_str();
                match call.target.as_deref() {
                    None => {
                        if !is_operator(name) && !self.declared(name, false) {
                            self.report(e, name);
                        }
                    }
                    Some(target) => {
                        let qualified = match &target.expr {
                            Expr::Ident(ns) if !scope.iter().any(|s| s == ns) => {
                                Some(format!("{ns}.{name}"))
                            }
                            _ => None,
                        };
                        match qualified {
                            Some(q) if self.declared(&q, false) => {}
                            _ => {
                                self.walk(target, scope, declared);
                                if !self.declared(name, true) {
                                    self.report(e, name);
                                }
                            }
                        }
                    }
                }
                for arg in &call.args {
                    self.walk(arg, scope, declared);
                }
            }
        }
    }

    /// Whether a function is declared: calling it with no arguments fails with anything but
    /// an undeclared reference.
    fn declared(&self, name: &str, member: bool) -> bool {
        let call = if member {
            format!("0.{name}()")
        } else {
            format!("{name}()")
        };
        let Ok(program) = self.env.compile(&call) else {
            return false;
        };
        let ctx = cel::Context::with_env(self.env.clone());
        !matches!(
            program.execute(&ctx),
            Err(ExecutionError::UndeclaredReference(_))
        )
    }
}

/// Operators and the interpreter's internal functions (`_+_`, `!_`, `@in`, `_[_]`…).
fn is_operator(name: &str) -> bool {
    name.starts_with('_') || name.starts_with('@') || name.starts_with('!') || name == "-_"
}

/// A chain of field selections on a variable, e.g. `self.spec.cidr` (also under `has()`), with
/// the byte offset in the source of each selection.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct Selection {
    /// The variable, e.g. `self`.
    pub variable: String,
    /// The selected fields, outermost first, each with its source offset.
    pub fields: Vec<(String, usize)>,
}

/// Every selection chain rooted at one of `variables`.
pub(crate) fn selections(program: &Program, variables: &[&str]) -> Vec<Selection> {
    let mut out = BTreeSet::new();
    collect(program, program.expression(), variables, &mut out);
    out.into_iter().collect()
}

fn collect(program: &Program, e: &IdedExpr, variables: &[&str], out: &mut BTreeSet<Selection>) {
    match &e.expr {
        Expr::Select(sel) => {
            let mut fields = Vec::new();
            let mut cur = e;
            loop {
                match &cur.expr {
                    Expr::Select(s) => {
                        let offset = program
                            .source_info()
                            .offset_for(cur.id)
                            .map_or(0, |(start, _)| start as usize);
                        fields.push((s.field.clone(), offset));
                        cur = &s.operand;
                    }
                    Expr::Ident(name) if variables.contains(&name.as_str()) => {
                        fields.reverse();
                        out.insert(Selection {
                            variable: name.clone(),
                            fields,
                        });
                        break;
                    }
                    _ => break,
                }
            }
            collect(program, &sel.operand, variables, out);
        }
        Expr::Call(call) => {
            if let Some(t) = &call.target {
                collect(program, t, variables, out);
            }
            for a in &call.args {
                collect(program, a, variables, out);
            }
        }
        Expr::Comprehension(c) => {
            // A comprehension variable named like a declared variable shadows it.
            let inner: Vec<&str> = variables
                .iter()
                .copied()
                .filter(|v| {
                    *v != c.iter_var && Some(*v) != c.iter_var2.as_deref() && *v != c.accu_var
                })
                .collect();
            collect(program, &c.iter_range, variables, out);
            collect(program, &c.accu_init, variables, out);
            for part in [&c.loop_cond, &c.loop_step, &c.result] {
                collect(program, part, &inner, out);
            }
        }
        Expr::List(l) => {
            for item in &l.elements {
                collect(program, item, variables, out);
            }
        }
        Expr::Map(m) => {
            for entry in &m.entries {
                match &entry.expr {
                    EntryExpr::StructField(f) => collect(program, &f.value, variables, out),
                    EntryExpr::MapEntry(me) => {
                        collect(program, &me.key, variables, out);
                        collect(program, &me.value, variables, out);
                    }
                }
            }
        }
        Expr::Struct(st) => {
            for entry in &st.entries {
                match &entry.expr {
                    EntryExpr::StructField(f) => collect(program, &f.value, variables, out),
                    EntryExpr::MapEntry(me) => {
                        collect(program, &me.key, variables, out);
                        collect(program, &me.value, variables, out);
                    }
                }
            }
        }
        Expr::Ident(_) | Expr::Literal(_) | Expr::Unspecified => {}
    }
}

/// Renders an issue at a byte offset of `source`, like cel-go.
pub(crate) fn issue_at(source: &str, offset: usize, msg: &str) -> String {
    let (line, col) = position(source, offset);
    issue(source, line, col, msg)
}
