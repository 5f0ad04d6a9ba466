//! Kubernetes' regex library (`k8s.io/apiserver/pkg/cel/library/regex.go`): `find` and
//! `findAll` on strings.

use cel::common::types::{CelInt, CelList, CelString};
use cel::common::value::Val;
use cel::{DeclarationError, Env, ExecutionError};

fn compile(pattern: &str) -> Result<regex::Regex, ExecutionError> {
    regex::RegexBuilder::new(pattern)
        .size_limit(1 << 20)
        .build()
        .map_err(|e| ExecutionError::function_error("find", e.to_string()))
}

fn find(
    this: &CelString<'_>,
    pattern: &CelString<'_>,
) -> Result<CelString<'static>, ExecutionError> {
    let re = compile(pattern.inner())?;
    Ok(re
        .find(this.inner())
        .map_or(String::new(), |m| m.as_str().to_string())
        .into())
}

fn find_all_n(
    this: &CelString<'_>,
    pattern: &CelString<'_>,
    limit: &CelInt,
) -> Result<CelList<'static>, ExecutionError> {
    let re = compile(pattern.inner())?;
    let limit = *limit.inner();
    let found = re.find_iter(this.inner()).map(|m| m.as_str().to_string());
    let found: Vec<String> = if limit < 0 {
        found.collect()
    } else {
        found.take(limit as usize).collect()
    };
    let items: Vec<Box<dyn Val>> = found
        .into_iter()
        .map(|s| Box::new(CelString::from(s)) as Box<dyn Val>)
        .collect();
    Ok(CelList::from(items))
}

fn find_all(
    this: &CelString<'_>,
    pattern: &CelString<'_>,
) -> Result<CelList<'static>, ExecutionError> {
    find_all_n(this, pattern, &CelInt::from(-1))
}

/// Registers the regex functions.
pub(crate) fn register(env: &mut Env) -> Result<(), DeclarationError> {
    cel::add_member_overload!(env, fn find: (CelString, CelString) -> Result<CelString>)?;
    cel::add_member_overload!(env, fn find_all: (CelString, CelString) -> Result<CelList>)?;
    cel::add_member_overload!(env, fn find_all_n: (CelString, CelString, CelInt) -> Result<CelList>,
        name = "findAll")?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use crate::tests::check;

    #[test]
    fn regex() {
        check(
            "'abc 123'.find('[0-9]+') == '123' && 'abc'.find('[0-9]+') == ''",
            true,
        );
        check("'1 2 3'.findAll('[0-9]') == ['1', '2', '3']", true);
        check("'1 2 3'.findAll('[0-9]', 2) == ['1', '2']", true);
    }
}
