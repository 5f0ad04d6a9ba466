//! The live members of a process group, read from `/proc` (zombies are not live: they hold no
//! pipe and run nothing, and whether they are reaped depends on who adopted them).

use std::path::Path;

/// One live process of a group.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Member {
    pub(crate) pid: i32,
    pub(crate) command: String,
}

impl std::fmt::Display for Member {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "pid {} `{}`", self.pid, self.command)
    }
}

/// The live processes of group `pgid`.
pub(crate) fn members(pgid: i32) -> Vec<Member> {
    members_in(Path::new("/proc"), pgid)
}

fn members_in(proc: &Path, pgid: i32) -> Vec<Member> {
    let Ok(entries) = std::fs::read_dir(proc) else {
        return Vec::new();
    };
    let mut found: Vec<Member> = entries
        .flatten()
        .filter_map(|e| e.file_name().to_str()?.parse::<i32>().ok())
        .filter_map(|pid| {
            let stat = std::fs::read_to_string(proc.join(pid.to_string()).join("stat")).ok()?;
            let (state, group) = state_and_group(&stat)?;
            (group == pgid && state != 'Z' && state != 'X').then(|| Member {
                pid,
                command: command_line(&proc.join(pid.to_string())),
            })
        })
        .collect();
    found.sort_by_key(|m| m.pid);
    found
}

/// The state and process group of a `/proc/PID/stat` line: `pid (comm) state ppid pgrp …`,
/// where `comm` may itself hold spaces and parentheses.
fn state_and_group(stat: &str) -> Option<(char, i32)> {
    let rest = &stat[stat.rfind(')')? + 1..];
    let mut fields = rest.split_whitespace();
    let state = fields.next()?.chars().next()?;
    let _ppid = fields.next()?;
    Some((state, fields.next()?.parse().ok()?))
}

fn command_line(dir: &Path) -> String {
    let raw = std::fs::read(dir.join("cmdline")).unwrap_or_default();
    let args: Vec<String> = raw
        .split(|b| *b == 0)
        .filter(|a| !a.is_empty())
        .map(|a| String::from_utf8_lossy(a).into_owned())
        .collect();
    if args.is_empty() {
        std::fs::read_to_string(dir.join("comm"))
            .map(|c| c.trim().to_owned())
            .unwrap_or_default()
    } else {
        args.join(" ")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stat_lines_with_odd_command_names_are_read() {
        assert_eq!(
            state_and_group("42 (a (b) c) S 1 40 40 0 -1"),
            Some(('S', 40))
        );
        assert_eq!(state_and_group("42 (x) Z 1 7 7"), Some(('Z', 7)));
        assert_eq!(state_and_group("garbage"), None);
    }

    #[test]
    fn zombies_and_other_groups_are_left_out() {
        let proc = tempfile::tempdir().expect("tempdir");
        for (pid, stat, cmdline) in [
            (10, "10 (srv) S 1 10 10", "srv\0--port\x008080\0"),
            (11, "11 (old) Z 1 10 10", ""),
            (12, "12 (other) S 1 12 12", "other\0"),
            (13, "13 (kworker) S 2 10 10", ""),
        ] {
            let dir = proc.path().join(pid.to_string());
            std::fs::create_dir(&dir).expect("mkdir");
            std::fs::write(dir.join("stat"), stat).expect("stat");
            std::fs::write(dir.join("cmdline"), cmdline).expect("cmdline");
            std::fs::write(dir.join("comm"), "kworker\n").expect("comm");
        }
        let found = members_in(proc.path(), 10);
        let shown: Vec<String> = found.iter().map(ToString::to_string).collect();
        assert_eq!(shown, ["pid 10 `srv --port 8080`", "pid 13 `kworker`"]);
    }

    #[test]
    fn this_process_is_found_in_its_group() {
        let pgid = rustix::process::getpgrp().as_raw_nonzero().get();
        let me = i32::try_from(std::process::id()).expect("pid");
        // This test's process is in its own group unless its runner moved it; either way the
        // group it is in lists it.
        assert!(members(pgid).iter().any(|m| m.pid == me));
    }
}
