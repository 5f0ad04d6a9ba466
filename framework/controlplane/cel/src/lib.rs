//! The Common Expression Language (CEL) as Kubernetes uses it in CRD validation rules
//! (`x-kubernetes-validations`).
//!
//! This crate wraps the [`cel`] interpreter (cel-rust) and adds what kube-apiserver's CEL
//! environment has on top of the CEL standard library:
//!
//! - the strings extension (`split`, `lowerAscii`, `upperAscii`, `trim`, `join`, `replace`,
//!   `indexOf`, `lastIndexOf`, `substring`, `charAt`, `format`, `strings.quote`, …), from cel-rust;
//! - Kubernetes' IP and CIDR library (`isIP`, `ip()`, `family()`, `isCIDR`, `cidr()`,
//!   `containsIP`, `containsCIDR`, `masked()`, …) with its `net.IP` and `net.CIDR` types;
//! - Kubernetes' list library (`isSorted`, `sum`, `min`, `max`, `indexOf`, `lastIndexOf`);
//! - the regex library (`find`, `findAll`) and the sets extension (`sets.contains`,
//!   `sets.equivalent`, `sets.intersects`).
//!
//! Start with [`Env::kubernetes`], then [`Env::compile`] a rule with the variables it may use;
//! [`Program::evaluate`] runs it on [`Value`]s. Compiling checks syntax and that every
//! identifier and function is declared; cel-rust has no type checker, so type errors that
//! kube-apiserver reports at compile time show up here when a rule is evaluated — except
//! undeclared fields, which a caller that knows the schema checks with
//! [`Program::selections`] and reports with [`Program::issue`].

mod check;
mod lists;
mod net;
mod sets;
mod text;

use std::collections::BTreeSet;
use std::sync::Arc;

pub use cel::Value;
pub use cel::objects::Key;
pub use check::Selection;

/// Errors from compiling or evaluating an expression.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The expression does not compile; the message is formatted like cel-go's issues
    /// (`ERROR: <input>:1:6: Syntax error: …` followed by the source line and a caret).
    #[error("{0}")]
    Compile(String),
    /// The expression failed at runtime, e.g. `no such key: foo` or `division by zero`.
    #[error("{0}")]
    Evaluation(String),
}

/// A CEL environment with Kubernetes' libraries, shared by the programs it compiles.
#[derive(Clone)]
pub struct Env {
    inner: Arc<cel::Env>,
}

impl Default for Env {
    fn default() -> Self {
        Self::kubernetes()
    }
}

impl Env {
    /// The environment of kube-apiserver's CRD validation rules.
    pub fn kubernetes() -> Self {
        let mut env = cel::Env::stdlib();
        // Registering the libraries into a fresh environment cannot conflict: the names are
        // ours and distinct from the standard library's, so failures are programming errors
        // caught by the tests.
        let results = [
            env.add_extension(cel::extensions::strings),
            net::register(&mut env),
            lists::register(&mut env),
            sets::register(&mut env),
            text::register(&mut env),
        ];
        for r in results {
            debug_assert!(r.is_ok(), "registering a CEL library: {r:?}");
        }
        Self {
            inner: Arc::new(env),
        }
    }

    /// Compiles `source`. `variables` are the identifiers the expression may use (`self`,
    /// `oldSelf`); any other identifier, and any undeclared function, is a compile error, as
    /// are syntax errors and an expression that is a literal of another type than bool when
    /// `bool_result` is set.
    pub fn compile(
        &self,
        source: &str,
        variables: &[&str],
        bool_result: bool,
    ) -> Result<Program, Error> {
        let program = self
            .inner
            .compile(source)
            .map_err(|e| Error::Compile(check::render_parse_errors(source, &e)))?;
        let used = check::check(&self.inner, &program, source, variables, bool_result)
            .map_err(Error::Compile)?;
        Ok(Program {
            program,
            env: self.inner.clone(),
            variables: used,
            source: source.to_string(),
        })
    }
}

impl std::fmt::Debug for Env {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Env(kubernetes)")
    }
}

/// A compiled expression, cheap to evaluate many times.
pub struct Program {
    program: cel::Program,
    env: Arc<cel::Env>,
    variables: BTreeSet<String>,
    source: String,
}

impl std::fmt::Debug for Program {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Program")
            .field("variables", &self.variables)
            .finish_non_exhaustive()
    }
}

impl Program {
    /// Whether the expression refers to variable `name` (e.g. `oldSelf`: a transition rule).
    pub fn uses(&self, name: &str) -> bool {
        self.variables.contains(name)
    }

    /// The field selections on `variables` the expression makes (`self.spec.cidr`), for a
    /// caller that knows the variables' types to check them.
    pub fn selections(&self, variables: &[&str]) -> Vec<Selection> {
        check::selections(&self.program, variables)
    }

    /// A compile error at byte `offset` of the source, rendered like cel-go's issues, e.g.
    /// `ERROR: <input>:1:5: undefined field 'x'` with the source line and a caret.
    pub fn issue(&self, offset: usize, message: &str) -> Error {
        Error::Compile(check::issue_at(&self.source, offset, message))
    }

    /// Evaluates the expression with the given variables bound.
    pub fn evaluate(&self, variables: &[(&str, &Value)]) -> Result<Value, Error> {
        let mut ctx = cel::Context::with_env(self.env.clone());
        for (name, value) in variables {
            ctx.add_variable_from_value(*name, (*value).clone());
        }
        self.program
            .execute(&ctx)
            .map_err(|e| Error::Evaluation(runtime_message(&e)))
    }
}

/// A runtime error in cel-go's words where they differ (`no such key: x`, `division by zero`).
fn runtime_message(e: &cel::ExecutionError) -> String {
    use cel::ExecutionError as E;
    match e {
        E::NoSuchKey(k) => format!("no such key: {k}"),
        E::NoSuchOverload(_) => format!("no such overload: {e}"),
        E::UndeclaredReference(r) => format!("undeclared reference to '{r}'"),
        E::DivisionByZero(_) => "division by zero".to_string(),
        E::RemainderByZero(_) => "modulus by zero".to_string(),
        E::Overflow(..) => "integer overflow".to_string(),
        E::IndexOutOfBounds(i) => format!("index out of bounds: {}", display(i)),
        E::FunctionError { message, .. } => message.clone(),
        other => other.to_string(),
    }
}

/// A value as CEL's `string()` would print a scalar, for messages.
pub fn display(v: &Value) -> String {
    match v {
        Value::Int(i) => i.to_string(),
        Value::UInt(u) => u.to_string(),
        Value::Float(f) => f.to_string(),
        Value::String(s) => s.to_string(),
        Value::Bool(b) => b.to_string(),
        Value::Null => "null".to_string(),
        other => format!("{other:?}"),
    }
}

/// Builds a map value from string keys.
pub fn map(entries: impl IntoIterator<Item = (String, Value)>) -> Value {
    let map: std::collections::HashMap<Key, Value> = entries
        .into_iter()
        .map(|(k, v)| (Key::String(Arc::new(k)), v))
        .collect();
    Value::Map(map.into())
}

/// Builds an optional value (`optional.of(v)` or `optional.none()`), as `oldSelf` is bound
/// for rules with `optionalOldSelf: true`.
pub fn optional(v: Option<Value>) -> Value {
    use cel::objects::OptionalValue;
    Value::Opaque(Arc::new(match v {
        Some(v) => OptionalValue::of(v),
        None => OptionalValue::none(),
    }))
}

/// Builds a list value.
pub fn list(items: Vec<Value>) -> Value {
    Value::List(Arc::new(items))
}

/// Builds a string value.
pub fn string(s: &str) -> Value {
    Value::String(Arc::new(s.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Evaluates `expr` with `self` bound to `this` and compares with `expected`.
    pub(crate) fn eval(expr: &str, this: Value) -> Result<Value, Error> {
        let env = Env::kubernetes();
        let p = env.compile(expr, &["self", "oldSelf"], false)?;
        p.evaluate(&[("self", &this)])
    }

    pub(crate) fn check(expr: &str, expected: impl Into<Value>) {
        assert_eq!(
            eval(expr, Value::Null),
            Ok(expected.into()),
            "expression {expr}"
        );
    }

    pub(crate) fn check_err(expr: &str, expected: &str) {
        assert_eq!(
            eval(expr, Value::Null).map_err(|e| e.to_string()),
            Err(expected.to_string()),
            "expression {expr}"
        );
    }

    #[test]
    fn standard_library_and_macros() {
        check("size('héllo') == 5", true);
        check("size([1, 2]) == 2 && size({'a': 1}) == 1", true);
        check("'abc'.matches('^a.c$')", true);
        check("[1, 2, 3].all(x, x > 0)", true);
        check("[1, 2, 3].exists(x, x > 2)", true);
        check("[1, 2, 3].exists_one(x, x > 1)", false);
        check("[1, 2, 3].map(x, x * 2) == [2, 4, 6]", true);
        check("[1, 2, 3].filter(x, x > 1) == [2, 3]", true);
        check("has({'a': 1}.a) && !has({'a': 1}.b)", true);
        check("{'a': 1}.all(k, k == 'a')", true);
        check("'a' in {'a': 1} && 2 in [1, 2]", true);
        check(
            "int('5') + 1 == 6 && string(5) == '5' && double(1) == 1.0",
            true,
        );
        check("type(1) == int", true);
        check("[1,2].size() == 2", true);
    }

    #[test]
    fn strings_extension() {
        check("'a,b'.split(',') == ['a', 'b']", true);
        check(
            "'AbC'.lowerAscii() == 'abc' && 'aBc'.upperAscii() == 'ABC'",
            true,
        );
        check("' x '.trim() == 'x'", true);
        check("['a', 'b'].join('-') == 'a-b'", true);
        check("'aXa'.replace('a', 'b') == 'bXb'", true);
        check(
            "'hello'.indexOf('l') == 2 && 'hello'.lastIndexOf('l') == 3",
            true,
        );
        check(
            "'hello'.substring(1, 3) == 'el' && 'hello'.charAt(1) == 'e'",
            true,
        );
        // kube-apiserver estimates `string(int)` as unbounded, so messages with a number use
        // `format`, whose cost it bounds.
        check(
            "'cores: %d is not between 1 and 32'.format([64]) == 'cores: 64 is not between 1 and 32'",
            true,
        );
        check("'%s-%d'.format(['a', 1]) == 'a-1'", true);
        // A limit bounds the parts, and kube-apiserver's cost estimate with them.
        check("'a,b,c'.split(',', 2) == ['a', 'b,c']", true);
        check("'a'.split(',', 2) == ['a']", true);
    }

    #[test]
    fn variables() {
        let this = map([("name".to_string(), string("web"))]);
        assert_eq!(eval("self.name == 'web'", this.clone()), Ok(true.into()));
        assert_eq!(eval("self['name'] == 'web'", this.clone()), Ok(true.into()));
        assert_eq!(
            eval("self.missing == 'x'", this).map_err(|e| e.to_string()),
            Err("no such key: missing".to_string())
        );
        let env = Env::kubernetes();
        let p = env.compile("self == oldSelf", &["self", "oldSelf"], true);
        assert!(p.is_ok_and(|p| p.uses("oldSelf") && p.uses("self")));
        let p = env.compile(
            "oldSelf.hasValue() ? oldSelf.value() == self : self == 1",
            &["self", "oldSelf"],
            true,
        );
        let p = p.map_err(|e| e.to_string());
        let run = |old| {
            p.as_ref()
                .map(|p| p.evaluate(&[("self", &Value::Int(1)), ("oldSelf", &optional(old))]))
        };
        assert_eq!(run(None), Ok(Ok(Value::Bool(true))));
        assert_eq!(run(Some(Value::Int(2))), Ok(Ok(Value::Bool(false))));
    }

    #[test]
    fn runtime_errors_read_like_cel_go() {
        check_err("1 / 0 == 1", "division by zero");
        check_err("[1][3] == 1", "index out of bounds: 3");
        check_err("9223372036854775807 + 1 > 0", "integer overflow");
    }

    #[test]
    fn compile_errors() {
        let env = Env::kubernetes();
        let err = |src: &str| {
            env.compile(src, &["self"], true)
                .err()
                .map(|e| e.to_string())
                .unwrap_or_default()
        };
        assert!(
            err("self.").starts_with("ERROR: <input>:1:6: Syntax error:"),
            "{}",
            err("self.")
        );
        assert!(
            err("self.").ends_with("\n | self.\n | .....^"),
            "{}",
            err("self.")
        );
        assert_eq!(
            err("foo == 1"),
            "ERROR: <input>:1:1: undeclared reference to 'foo' (in container '')\n | foo == 1\n | ^"
        );
        assert_eq!(
            err("self.x && nope(1)"),
            "ERROR: <input>:1:15: undeclared reference to 'nope' (in container '')\n | self.x && nope(1)\n | ..............^"
        );
        assert_eq!(
            err("self.bogus()"),
            "ERROR: <input>:1:11: undeclared reference to 'bogus' (in container '')\n | self.bogus()\n | ..........^"
        );
        assert_eq!(err("'x'"), "cel expression must evaluate to a bool");
        assert!(err("oldSelf == self").contains("'oldSelf'"));
        assert_eq!(err("self.all(x, x > 0) && [1].map(y, y) == [1]"), "");
        assert_eq!(
            err("ip.isCanonical('1.2.3.4') && sets.contains([1], [1])"),
            ""
        );
        assert_eq!(err("type(self) == int || type(self) == string"), "");
        assert_eq!(err("self.?x.orValue(1) == 1"), "");
    }

    #[test]
    fn selections_are_listed_with_offsets() {
        let env = Env::kubernetes();
        let p = env
            .compile(
                "has(self.a.b) && self.c.all(self, self.d) && oldSelf.e == 1",
                &["self", "oldSelf"],
                true,
            )
            .map_err(|e| e.to_string());
        let got = p.as_ref().map(|p| p.selections(&["self", "oldSelf"]));
        let sel = |v: &str, fields: &[(&str, usize)]| Selection {
            variable: v.to_string(),
            fields: fields.iter().map(|(f, o)| (f.to_string(), *o)).collect(),
        };
        assert_eq!(
            got,
            Ok(vec![
                sel("oldSelf", &[("e", 52)]),
                sel("self", &[("a", 8)]),
                sel("self", &[("a", 8), ("b", 3)]),
                sel("self", &[("c", 21)]),
            ])
        );
        assert_eq!(
            p.map(|p| p.issue(52, "undefined field 'e'").to_string()),
            Ok("ERROR: <input>:1:53: undefined field 'e'\n | has(self.a.b) && self.c.all(self, self.d) && oldSelf.e == 1\n | ....................................................^".to_string())
        );
    }
}
