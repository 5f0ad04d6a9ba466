//! Kubernetes' list library (`k8s.io/apiserver/pkg/cel/library/lists.go`): `isSorted`, `sum`,
//! `min`, `max`, `indexOf` and `lastIndexOf` on lists.

use std::cmp::Ordering;

use cel::common::types::{DYN_TYPE, LIST_TYPE};
use cel::common::value::{CowVal, Val};
use cel::{DeclarationError, Env, ExecutionError, Value};

/// The arguments of an overload as [`Value`]s.
pub(crate) fn values(args: &[CowVal<'_, '_>]) -> Result<Vec<Value>, ExecutionError> {
    args.iter().map(|a| Value::try_from(&**a)).collect()
}

/// A [`Value`] as an overload's result.
pub(crate) fn owned<'b, 'v>(v: Value) -> Result<CowVal<'b, 'v>, ExecutionError> {
    let boxed: Box<dyn Val> = v.try_into()?;
    Ok(CowVal::Owned(boxed))
}

fn items(v: &Value, function: &str) -> Result<Vec<Value>, ExecutionError> {
    match v {
        Value::List(l) => Ok(l.to_vec()),
        other => Err(ExecutionError::function_error(
            function,
            format!("{function} called on a non-list: {other:?}"),
        )),
    }
}

fn compare(a: &Value, b: &Value) -> Result<Ordering, ExecutionError> {
    a.partial_cmp(b)
        .ok_or_else(|| ExecutionError::ValuesNotComparable(a.clone(), b.clone()))
}

fn is_sorted<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> Result<CowVal<'b, 'v>, ExecutionError> {
    let v = values(&args)?;
    let list = items(&v[0], "isSorted")?;
    for pair in list.windows(2) {
        if compare(&pair[0], &pair[1])? == Ordering::Greater {
            return owned(Value::Bool(false));
        }
    }
    owned(Value::Bool(true))
}

fn sum<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> Result<CowVal<'b, 'v>, ExecutionError> {
    let v = values(&args)?;
    let mut list = items(&v[0], "sum")?.into_iter();
    let Some(mut total) = list.next() else {
        return owned(Value::Int(0));
    };
    for item in list {
        total = (total + item)?;
    }
    owned(total)
}

fn extreme<'b, 'v>(
    args: Vec<CowVal<'b, 'v>>,
    function: &str,
    keep: Ordering,
) -> Result<CowVal<'b, 'v>, ExecutionError> {
    let v = values(&args)?;
    let mut list = items(&v[0], function)?.into_iter();
    let Some(mut best) = list.next() else {
        return Err(ExecutionError::function_error(
            function,
            format!("{function} called on empty list"),
        ));
    };
    for item in list {
        if compare(&item, &best)? == keep {
            best = item;
        }
    }
    owned(best)
}

fn min<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> Result<CowVal<'b, 'v>, ExecutionError> {
    extreme(args, "min", Ordering::Less)
}

fn max<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> Result<CowVal<'b, 'v>, ExecutionError> {
    extreme(args, "max", Ordering::Greater)
}

fn position<'b, 'v>(
    args: Vec<CowVal<'b, 'v>>,
    function: &str,
    last: bool,
) -> Result<CowVal<'b, 'v>, ExecutionError> {
    let v = values(&args)?;
    let list = items(&v[0], function)?;
    let found = if last {
        list.iter().rposition(|x| *x == v[1])
    } else {
        list.iter().position(|x| *x == v[1])
    };
    owned(Value::Int(found.map_or(-1, |i| i as i64)))
}

fn index_of<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> Result<CowVal<'b, 'v>, ExecutionError> {
    position(args, "indexOf", false)
}

fn last_index_of<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> Result<CowVal<'b, 'v>, ExecutionError> {
    position(args, "lastIndexOf", true)
}

/// Registers the list functions.
pub(crate) fn register(env: &mut Env) -> Result<(), DeclarationError> {
    env.add_member_overload("isSorted", "list_is_sorted", LIST_TYPE, vec![], is_sorted)?;
    env.add_member_overload("sum", "list_sum", LIST_TYPE, vec![], sum)?;
    env.add_member_overload("min", "list_min", LIST_TYPE, vec![], min)?;
    env.add_member_overload("max", "list_max", LIST_TYPE, vec![], max)?;
    env.add_member_overload(
        "indexOf",
        "list_index_of",
        LIST_TYPE,
        vec![DYN_TYPE],
        index_of,
    )?;
    env.add_member_overload(
        "lastIndexOf",
        "list_last_index_of",
        LIST_TYPE,
        vec![DYN_TYPE],
        last_index_of,
    )?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use crate::tests::{check, check_err};

    #[test]
    fn lists() {
        check(
            "[1, 2, 2, 3].isSorted() && !['b', 'a'].isSorted() && [].isSorted()",
            true,
        );
        check(
            "[1, 2, 3].sum() == 6 && [1.5, 2.5].sum() == 4.0 && [].sum() == 0",
            true,
        );
        check("[3, 1, 2].min() == 1 && [3, 1, 2].max() == 3", true);
        check("['b', 'a'].min() == 'a'", true);
        check(
            "[1, 2, 1].indexOf(1) == 0 && [1, 2, 1].lastIndexOf(1) == 2",
            true,
        );
        check("['a'].indexOf('z') == -1", true);
        check("'abcb'.indexOf('b') == 1", true);
        check_err("[].min() == 0", "min called on empty list");
    }
}
