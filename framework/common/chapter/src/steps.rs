//! The `$ ` commands of a chapter's ```` ```console ```` blocks, with the lines shown under each.

/// One `$ ` command of a chapter and the lines shown under it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Step {
    /// The command, without the `$ ` prompt.
    pub command: String,
    /// The lines the chapter shows as its output.
    pub expected: Vec<String>,
}

/// The steps of every ```` ```console ```` block of `chapter`, in order.
#[must_use]
pub fn console_steps(chapter: &str) -> Vec<Step> {
    let mut steps: Vec<Step> = Vec::new();
    let mut in_console = false;
    for line in chapter.lines() {
        if line.starts_with("```") {
            in_console = line.trim() == "```console";
        } else if in_console {
            match line.strip_prefix("$ ") {
                Some(command) => steps.push(Step {
                    command: command.to_owned(),
                    expected: Vec::new(),
                }),
                None => {
                    if let Some(step) = steps.last_mut() {
                        step.expected.push(line.to_owned());
                    }
                }
            }
        }
    }
    steps
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn steps_keep_their_output_and_skip_other_blocks() {
        let chapter = "text\n```console\n$ a\nout 1\nout 2\n$ b &\n```\n\n```yaml\n$ not: a command\n```\n```console\n$ c\n```\n";
        let steps = console_steps(chapter);
        let commands: Vec<&str> = steps.iter().map(|s| s.command.as_str()).collect();
        assert_eq!(commands, ["a", "b &", "c"]);
        assert_eq!(steps[0].expected, ["out 1", "out 2"]);
        assert!(steps[1].expected.is_empty());
    }

    #[test]
    fn text_before_the_first_command_is_not_output() {
        let steps = console_steps("```console\nstray\n$ a\n```\n");
        assert_eq!(steps.len(), 1);
        assert!(steps[0].expected.is_empty());
    }
}
