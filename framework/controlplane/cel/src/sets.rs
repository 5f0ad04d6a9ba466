//! The CEL sets extension (`sets.contains`, `sets.equivalent`, `sets.intersects`), which
//! kube-apiserver's environment includes.

use cel::common::types::LIST_TYPE;
use cel::common::value::CowVal;
use cel::{DeclarationError, Env, ExecutionError, Value};

use crate::lists::{owned, values};

fn lists(args: &[CowVal<'_, '_>]) -> Result<(Vec<Value>, Vec<Value>), ExecutionError> {
    let v = values(args)?;
    match (v.first(), v.get(1)) {
        (Some(Value::List(a)), Some(Value::List(b))) => Ok((a.to_vec(), b.to_vec())),
        _ => Err(ExecutionError::function_error("sets", "expected two lists")),
    }
}

fn contains<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> Result<CowVal<'b, 'v>, ExecutionError> {
    let (a, b) = lists(&args)?;
    owned(Value::Bool(b.iter().all(|x| a.contains(x))))
}

fn equivalent<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> Result<CowVal<'b, 'v>, ExecutionError> {
    let (a, b) = lists(&args)?;
    owned(Value::Bool(
        b.iter().all(|x| a.contains(x)) && a.iter().all(|x| b.contains(x)),
    ))
}

fn intersects<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> Result<CowVal<'b, 'v>, ExecutionError> {
    let (a, b) = lists(&args)?;
    owned(Value::Bool(b.iter().any(|x| a.contains(x))))
}

/// Registers the sets functions.
pub(crate) fn register(env: &mut Env) -> Result<(), DeclarationError> {
    let two = || vec![LIST_TYPE, LIST_TYPE];
    env.add_overload("sets.contains", "sets_contains", two(), contains)?;
    env.add_overload("sets.equivalent", "sets_equivalent", two(), equivalent)?;
    env.add_overload("sets.intersects", "sets_intersects", two(), intersects)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use crate::tests::check;

    #[test]
    fn sets() {
        check(
            "sets.contains([1, 2, 3], [3, 1]) && !sets.contains([1], [2])",
            true,
        );
        check(
            "sets.equivalent([1, 2, 2], [2, 1]) && !sets.equivalent([1], [1, 2])",
            true,
        );
        check(
            "sets.intersects([1, 2], [2, 5]) && !sets.intersects([1], [])",
            true,
        );
    }
}
