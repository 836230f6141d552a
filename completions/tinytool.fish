# Print an optspec for argparse to handle cmd's options that are independent of any subcommand.
function __fish_tinytool_global_optspecs
    string join \n dir= session= policy= state= events= answers= text h/help V/version
end

function __fish_tinytool_needs_command
    # Figure out if the current invocation already has a command.
    set -l cmd (commandline -opc)
    set -e cmd[1]
    argparse -s (__fish_tinytool_global_optspecs) -- $cmd 2>/dev/null
    or return
    if set -q argv[1]
        # Also print the command, so this can be used to figure out what it is.
        echo $argv[1]
        return 1
    end
    return 0
end

function __fish_tinytool_using_subcommand
    set -l cmd (__fish_tinytool_needs_command)
    test -z "$cmd"
    and return 1
    contains -- $cmd[1] $argv
end

complete -c tinytool -n "__fish_tinytool_needs_command" -l dir -d 'Working directory: paths in tool calls resolve here [default: current directory]' -r
complete -c tinytool -n "__fish_tinytool_needs_command" -l session -d 'Session id: todos, agent mode, jobs and approvals are per session [default: default]' -r
complete -c tinytool -n "__fish_tinytool_needs_command" -l policy -d 'The permission policy, in place of the user policy' -r
complete -c tinytool -n "__fish_tinytool_needs_command" -l state -d 'The state database [default: DIR/.tinytool/state.db]' -r
complete -c tinytool -n "__fish_tinytool_needs_command" -l events -d 'Append bus events to FILE as JSON lines (`-` = standard error)' -r
complete -c tinytool -n "__fish_tinytool_needs_command" -l answers -d 'Answers for the question tool: a JSON list, used in order per session' -r
complete -c tinytool -n "__fish_tinytool_needs_command" -l text -d 'Print only the output text; the exit status carries the outcome'
complete -c tinytool -n "__fish_tinytool_needs_command" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c tinytool -n "__fish_tinytool_needs_command" -s V -l version -d 'Print version'
complete -c tinytool -n "__fish_tinytool_needs_command" -f -a "read" -d 'Read a file\'s lines, numbered'
complete -c tinytool -n "__fish_tinytool_needs_command" -f -a "write" -d 'Create or overwrite a file'
complete -c tinytool -n "__fish_tinytool_needs_command" -f -a "edit" -d 'Replace text in a file'
complete -c tinytool -n "__fish_tinytool_needs_command" -f -a "apply_patch" -d 'Apply a multi-file patch, all or nothing'
complete -c tinytool -n "__fish_tinytool_needs_command" -f -a "bash" -d 'Run a shell command'
complete -c tinytool -n "__fish_tinytool_needs_command" -f -a "grep" -d 'Search file contents with a regular expression'
complete -c tinytool -n "__fish_tinytool_needs_command" -f -a "glob" -d 'Find files by name with a glob pattern'
complete -c tinytool -n "__fish_tinytool_needs_command" -f -a "question" -d 'Ask the user a question'
complete -c tinytool -n "__fish_tinytool_needs_command" -f -a "webfetch" -d 'Fetch a URL as text, Markdown or HTML'
complete -c tinytool -n "__fish_tinytool_needs_command" -f -a "task" -d 'Run a subagent, in the foreground or as a background job'
complete -c tinytool -n "__fish_tinytool_needs_command" -f -a "todowrite" -d 'Replace the session\'s todo list'
complete -c tinytool -n "__fish_tinytool_needs_command" -f -a "report_findings" -d 'Record review findings for the session'
complete -c tinytool -n "__fish_tinytool_needs_command" -f -a "monitor" -d 'Run a long-lived command in the background and read its output later'
complete -c tinytool -n "__fish_tinytool_needs_command" -f -a "notepad" -d 'Keep notes for the session'
complete -c tinytool -n "__fish_tinytool_needs_command" -f -a "plan_enter" -d 'Switch the session into plan mode'
complete -c tinytool -n "__fish_tinytool_needs_command" -f -a "plan_exit" -d 'Switch the session back to build mode'
complete -c tinytool -n "__fish_tinytool_needs_command" -f -a "exit" -d 'End the session\'s tool loop'
complete -c tinytool -n "__fish_tinytool_needs_command" -f -a "skill" -d 'Run a skill by name'
complete -c tinytool -n "__fish_tinytool_needs_command" -f -a "checkpoint" -d 'List the checkpoints taken before calls, show one, or undo one'
complete -c tinytool -n "__fish_tinytool_needs_command" -f -a "diagnostics" -d 'The language servers\' errors for a file, a folder or the project'
complete -c tinytool -n "__fish_tinytool_needs_command" -f -a "websearch" -d 'Search the web (Exa API)'
complete -c tinytool -n "__fish_tinytool_needs_command" -f -a "exec" -d 'Run tool calls given as JSON on standard input'
complete -c tinytool -n "__fish_tinytool_needs_command" -f -a "policy" -d 'Explain the policy\'s decisions'
complete -c tinytool -n "__fish_tinytool_needs_command" -f -a "state" -d 'Print the session\'s stored state as JSON'
complete -c tinytool -n "__fish_tinytool_needs_command" -f -a "sandbox" -d 'Print which sandbox layers this machine supports, and why one is missing'
complete -c tinytool -n "__fish_tinytool_needs_command" -f -a "lsp" -d 'Show or stop the language servers behind diagnostics'
complete -c tinytool -n "__fish_tinytool_needs_command" -f -a "checkpoints" -d 'List the checkpoints taken before calls, newest first'
complete -c tinytool -n "__fish_tinytool_needs_command" -f -a "undo" -d 'Revert the changes of a checkpoint'
complete -c tinytool -n "__fish_tinytool_needs_command" -f -a "tools" -d 'Print the tool definitions as one JSON array'
complete -c tinytool -n "__fish_tinytool_needs_command" -f -a "mcp" -d 'Serve every tool over the Model Context Protocol (stdio, or HTTP with --listen)'
complete -c tinytool -n "__fish_tinytool_needs_command" -f -a "completions" -d 'Print a shell completion script'
complete -c tinytool -n "__fish_tinytool_needs_command" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c tinytool -n "__fish_tinytool_using_subcommand read" -l dir -d 'Working directory: paths in tool calls resolve here [default: current directory]' -r
complete -c tinytool -n "__fish_tinytool_using_subcommand read" -l session -d 'Session id: todos, agent mode, jobs and approvals are per session [default: default]' -r
complete -c tinytool -n "__fish_tinytool_using_subcommand read" -l policy -d 'The permission policy, in place of the user policy' -r
complete -c tinytool -n "__fish_tinytool_using_subcommand read" -l state -d 'The state database [default: DIR/.tinytool/state.db]' -r
complete -c tinytool -n "__fish_tinytool_using_subcommand read" -l events -d 'Append bus events to FILE as JSON lines (`-` = standard error)' -r
complete -c tinytool -n "__fish_tinytool_using_subcommand read" -l answers -d 'Answers for the question tool: a JSON list, used in order per session' -r
complete -c tinytool -n "__fish_tinytool_using_subcommand read" -l file-path -d 'Path of the file to read: absolute, or relative to the working directory. [required]' -r
complete -c tinytool -n "__fish_tinytool_using_subcommand read" -l offset -d '0-based index of the first line to show (default 0).' -r
complete -c tinytool -n "__fish_tinytool_using_subcommand read" -l limit -d 'Maximum number of lines to show (default 2000).' -r
complete -c tinytool -n "__fish_tinytool_using_subcommand read" -l char-offset -d '0-based character of the line at offset to start from (reads on in a cut line; default 0).' -r
complete -c tinytool -n "__fish_tinytool_using_subcommand read" -s h -l help -d 'Print help'
complete -c tinytool -n "__fish_tinytool_using_subcommand read" -l text -d 'Print only the output text; the exit status carries the outcome'
complete -c tinytool -n "__fish_tinytool_using_subcommand read" -l stdin -d 'Also read a JSON object of parameters from standard input when flags are given'
complete -c tinytool -n "__fish_tinytool_using_subcommand write" -l dir -d 'Working directory: paths in tool calls resolve here [default: current directory]' -r
complete -c tinytool -n "__fish_tinytool_using_subcommand write" -l session -d 'Session id: todos, agent mode, jobs and approvals are per session [default: default]' -r
complete -c tinytool -n "__fish_tinytool_using_subcommand write" -l policy -d 'The permission policy, in place of the user policy' -r
complete -c tinytool -n "__fish_tinytool_using_subcommand write" -l state -d 'The state database [default: DIR/.tinytool/state.db]' -r
complete -c tinytool -n "__fish_tinytool_using_subcommand write" -l events -d 'Append bus events to FILE as JSON lines (`-` = standard error)' -r
complete -c tinytool -n "__fish_tinytool_using_subcommand write" -l answers -d 'Answers for the question tool: a JSON list, used in order per session' -r
complete -c tinytool -n "__fish_tinytool_using_subcommand write" -l file-path -d 'Path of the file to write: absolute, or relative to the working directory. [required]' -r
complete -c tinytool -n "__fish_tinytool_using_subcommand write" -l content -d 'The complete new content of the file. [required]' -r
complete -c tinytool -n "__fish_tinytool_using_subcommand write" -s h -l help -d 'Print help'
complete -c tinytool -n "__fish_tinytool_using_subcommand write" -l text -d 'Print only the output text; the exit status carries the outcome'
complete -c tinytool -n "__fish_tinytool_using_subcommand write" -l stdin -d 'Also read a JSON object of parameters from standard input when flags are given'
complete -c tinytool -n "__fish_tinytool_using_subcommand edit" -l dir -d 'Working directory: paths in tool calls resolve here [default: current directory]' -r
complete -c tinytool -n "__fish_tinytool_using_subcommand edit" -l session -d 'Session id: todos, agent mode, jobs and approvals are per session [default: default]' -r
complete -c tinytool -n "__fish_tinytool_using_subcommand edit" -l policy -d 'The permission policy, in place of the user policy' -r
complete -c tinytool -n "__fish_tinytool_using_subcommand edit" -l state -d 'The state database [default: DIR/.tinytool/state.db]' -r
complete -c tinytool -n "__fish_tinytool_using_subcommand edit" -l events -d 'Append bus events to FILE as JSON lines (`-` = standard error)' -r
complete -c tinytool -n "__fish_tinytool_using_subcommand edit" -l answers -d 'Answers for the question tool: a JSON list, used in order per session' -r
complete -c tinytool -n "__fish_tinytool_using_subcommand edit" -l file-path -d 'Path of the file to edit: absolute, or relative to the working directory. [required]' -r
complete -c tinytool -n "__fish_tinytool_using_subcommand edit" -l old-string -d 'The text to replace, copied from the file with enough context to be unique.' -r
complete -c tinytool -n "__fish_tinytool_using_subcommand edit" -l new-string -d 'The text to put in its place (must differ from old_string); with insert_line, the lines to insert.' -r
complete -c tinytool -n "__fish_tinytool_using_subcommand edit" -l replace-all -d 'Replace every occurrence of old_string (default false).' -r -f -a "true\t''
false\t''"
complete -c tinytool -n "__fish_tinytool_using_subcommand edit" -l edits -d 'Several replacements instead of old_string/new_string, applied in order, each to the text the one before left; if one fails, nothing is written.' -r
complete -c tinytool -n "__fish_tinytool_using_subcommand edit" -l insert-line -d 'Insert new_string as whole lines after this line (1-based; 0: at the top) instead of replacing old_string.' -r
complete -c tinytool -n "__fish_tinytool_using_subcommand edit" -l cell -d 'For a Jupyter notebook (.ipynb): edit only this cell\'s source, the cell\'s 0-based index as read shows it (`[cell N: ...]`); old_string, edits and insert_line then apply to that source alone.' -r
complete -c tinytool -n "__fish_tinytool_using_subcommand edit" -l cell-id -d 'For a Jupyter notebook: edit only the source of the cell with this id (instead of cell).' -r
complete -c tinytool -n "__fish_tinytool_using_subcommand edit" -s h -l help -d 'Print help'
complete -c tinytool -n "__fish_tinytool_using_subcommand edit" -l text -d 'Print only the output text; the exit status carries the outcome'
complete -c tinytool -n "__fish_tinytool_using_subcommand edit" -l stdin -d 'Also read a JSON object of parameters from standard input when flags are given'
complete -c tinytool -n "__fish_tinytool_using_subcommand apply_patch" -l dir -d 'Working directory: paths in tool calls resolve here [default: current directory]' -r
complete -c tinytool -n "__fish_tinytool_using_subcommand apply_patch" -l session -d 'Session id: todos, agent mode, jobs and approvals are per session [default: default]' -r
complete -c tinytool -n "__fish_tinytool_using_subcommand apply_patch" -l policy -d 'The permission policy, in place of the user policy' -r
complete -c tinytool -n "__fish_tinytool_using_subcommand apply_patch" -l state -d 'The state database [default: DIR/.tinytool/state.db]' -r
complete -c tinytool -n "__fish_tinytool_using_subcommand apply_patch" -l events -d 'Append bus events to FILE as JSON lines (`-` = standard error)' -r
complete -c tinytool -n "__fish_tinytool_using_subcommand apply_patch" -l answers -d 'Answers for the question tool: a JSON list, used in order per session' -r
complete -c tinytool -n "__fish_tinytool_using_subcommand apply_patch" -l patch -d 'The patch: `*** Begin Patch` … `*** End Patch`, or a unified diff. [required]' -r
complete -c tinytool -n "__fish_tinytool_using_subcommand apply_patch" -s h -l help -d 'Print help'
complete -c tinytool -n "__fish_tinytool_using_subcommand apply_patch" -l text -d 'Print only the output text; the exit status carries the outcome'
complete -c tinytool -n "__fish_tinytool_using_subcommand apply_patch" -l stdin -d 'Also read a JSON object of parameters from standard input when flags are given'
complete -c tinytool -n "__fish_tinytool_using_subcommand bash" -l dir -d 'Working directory: paths in tool calls resolve here [default: current directory]' -r
complete -c tinytool -n "__fish_tinytool_using_subcommand bash" -l session -d 'Session id: todos, agent mode, jobs and approvals are per session [default: default]' -r
complete -c tinytool -n "__fish_tinytool_using_subcommand bash" -l policy -d 'The permission policy, in place of the user policy' -r
complete -c tinytool -n "__fish_tinytool_using_subcommand bash" -l state -d 'The state database [default: DIR/.tinytool/state.db]' -r
complete -c tinytool -n "__fish_tinytool_using_subcommand bash" -l events -d 'Append bus events to FILE as JSON lines (`-` = standard error)' -r
complete -c tinytool -n "__fish_tinytool_using_subcommand bash" -l answers -d 'Answers for the question tool: a JSON list, used in order per session' -r
complete -c tinytool -n "__fish_tinytool_using_subcommand bash" -l command -d 'The shell command to run (sh -c, in the working directory). [required]' -r
complete -c tinytool -n "__fish_tinytool_using_subcommand bash" -l timeout -d 'Timeout in milliseconds (default 120000, at most 600000; 0 or less means the default).' -r
complete -c tinytool -n "__fish_tinytool_using_subcommand bash" -l description -d 'What the command does, in a few words (for logs; no effect).' -r
complete -c tinytool -n "__fish_tinytool_using_subcommand bash" -s h -l help -d 'Print help'
complete -c tinytool -n "__fish_tinytool_using_subcommand bash" -l text -d 'Print only the output text; the exit status carries the outcome'
complete -c tinytool -n "__fish_tinytool_using_subcommand bash" -l stdin -d 'Also read a JSON object of parameters from standard input when flags are given'
complete -c tinytool -n "__fish_tinytool_using_subcommand grep" -l dir -d 'Working directory: paths in tool calls resolve here [default: current directory]' -r
complete -c tinytool -n "__fish_tinytool_using_subcommand grep" -l session -d 'Session id: todos, agent mode, jobs and approvals are per session [default: default]' -r
complete -c tinytool -n "__fish_tinytool_using_subcommand grep" -l policy -d 'The permission policy, in place of the user policy' -r
complete -c tinytool -n "__fish_tinytool_using_subcommand grep" -l state -d 'The state database [default: DIR/.tinytool/state.db]' -r
complete -c tinytool -n "__fish_tinytool_using_subcommand grep" -l events -d 'Append bus events to FILE as JSON lines (`-` = standard error)' -r
complete -c tinytool -n "__fish_tinytool_using_subcommand grep" -l answers -d 'Answers for the question tool: a JSON list, used in order per session' -r
complete -c tinytool -n "__fish_tinytool_using_subcommand grep" -l pattern -d 'Regular expression to search for (Rust regex syntax). [required]' -r
complete -c tinytool -n "__fish_tinytool_using_subcommand grep" -l path -d 'Directory to search, or a single file (default: the working directory).' -r
complete -c tinytool -n "__fish_tinytool_using_subcommand grep" -l include -d 'Only search files whose base name or relative path matches this glob, e.g. `*.rs` or `*.{ts,tsx}`.' -r
complete -c tinytool -n "__fish_tinytool_using_subcommand grep" -l max-count -d 'Maximum number of matching lines to return (default 500; 0 or less also means 500).' -r
complete -c tinytool -n "__fish_tinytool_using_subcommand grep" -l include-ignored -d 'Also search files and directories that .gitignore, .ignore, .git/info/exclude or git\'s global excludes ignore (default false).' -r -f -a "true\t''
false\t''"
complete -c tinytool -n "__fish_tinytool_using_subcommand grep" -s h -l help -d 'Print help'
complete -c tinytool -n "__fish_tinytool_using_subcommand grep" -l text -d 'Print only the output text; the exit status carries the outcome'
complete -c tinytool -n "__fish_tinytool_using_subcommand grep" -l stdin -d 'Also read a JSON object of parameters from standard input when flags are given'
complete -c tinytool -n "__fish_tinytool_using_subcommand glob" -l dir -d 'Working directory: paths in tool calls resolve here [default: current directory]' -r
complete -c tinytool -n "__fish_tinytool_using_subcommand glob" -l session -d 'Session id: todos, agent mode, jobs and approvals are per session [default: default]' -r
complete -c tinytool -n "__fish_tinytool_using_subcommand glob" -l policy -d 'The permission policy, in place of the user policy' -r
complete -c tinytool -n "__fish_tinytool_using_subcommand glob" -l state -d 'The state database [default: DIR/.tinytool/state.db]' -r
complete -c tinytool -n "__fish_tinytool_using_subcommand glob" -l events -d 'Append bus events to FILE as JSON lines (`-` = standard error)' -r
complete -c tinytool -n "__fish_tinytool_using_subcommand glob" -l answers -d 'Answers for the question tool: a JSON list, used in order per session' -r
complete -c tinytool -n "__fish_tinytool_using_subcommand glob" -l pattern -d 'Glob pattern, e.g. `**/*.rs` or `src/*.{ts,tsx}` (supports `**`). [required]' -r
complete -c tinytool -n "__fish_tinytool_using_subcommand glob" -l path -d 'Directory to search in (default: the working directory).' -r
complete -c tinytool -n "__fish_tinytool_using_subcommand glob" -l include-ignored -d 'Also list files and directories that .gitignore, .ignore, .git/info/exclude or git\'s global excludes ignore (default false).' -r -f -a "true\t''
false\t''"
complete -c tinytool -n "__fish_tinytool_using_subcommand glob" -s h -l help -d 'Print help'
complete -c tinytool -n "__fish_tinytool_using_subcommand glob" -l text -d 'Print only the output text; the exit status carries the outcome'
complete -c tinytool -n "__fish_tinytool_using_subcommand glob" -l stdin -d 'Also read a JSON object of parameters from standard input when flags are given'
complete -c tinytool -n "__fish_tinytool_using_subcommand question" -l dir -d 'Working directory: paths in tool calls resolve here [default: current directory]' -r
complete -c tinytool -n "__fish_tinytool_using_subcommand question" -l session -d 'Session id: todos, agent mode, jobs and approvals are per session [default: default]' -r
complete -c tinytool -n "__fish_tinytool_using_subcommand question" -l policy -d 'The permission policy, in place of the user policy' -r
complete -c tinytool -n "__fish_tinytool_using_subcommand question" -l state -d 'The state database [default: DIR/.tinytool/state.db]' -r
complete -c tinytool -n "__fish_tinytool_using_subcommand question" -l events -d 'Append bus events to FILE as JSON lines (`-` = standard error)' -r
complete -c tinytool -n "__fish_tinytool_using_subcommand question" -l answers -d 'Answers for the question tool: a JSON list, used in order per session' -r
complete -c tinytool -n "__fish_tinytool_using_subcommand question" -l question -d 'The question to ask. [required]' -r
complete -c tinytool -n "__fish_tinytool_using_subcommand question" -l options -d 'Choices to offer (optional).' -r
complete -c tinytool -n "__fish_tinytool_using_subcommand question" -s h -l help -d 'Print help'
complete -c tinytool -n "__fish_tinytool_using_subcommand question" -l text -d 'Print only the output text; the exit status carries the outcome'
complete -c tinytool -n "__fish_tinytool_using_subcommand question" -l stdin -d 'Also read a JSON object of parameters from standard input when flags are given'
complete -c tinytool -n "__fish_tinytool_using_subcommand webfetch" -l dir -d 'Working directory: paths in tool calls resolve here [default: current directory]' -r
complete -c tinytool -n "__fish_tinytool_using_subcommand webfetch" -l session -d 'Session id: todos, agent mode, jobs and approvals are per session [default: default]' -r
complete -c tinytool -n "__fish_tinytool_using_subcommand webfetch" -l policy -d 'The permission policy, in place of the user policy' -r
complete -c tinytool -n "__fish_tinytool_using_subcommand webfetch" -l state -d 'The state database [default: DIR/.tinytool/state.db]' -r
complete -c tinytool -n "__fish_tinytool_using_subcommand webfetch" -l events -d 'Append bus events to FILE as JSON lines (`-` = standard error)' -r
complete -c tinytool -n "__fish_tinytool_using_subcommand webfetch" -l answers -d 'Answers for the question tool: a JSON list, used in order per session' -r
complete -c tinytool -n "__fish_tinytool_using_subcommand webfetch" -l url -d 'The URL to fetch (http or https). [required]' -r
complete -c tinytool -n "__fish_tinytool_using_subcommand webfetch" -l method -d 'HTTP method (default GET).' -r
complete -c tinytool -n "__fish_tinytool_using_subcommand webfetch" -l headers -d 'Additional request headers, name to value. Credential headers (Authorization, Cookie, X-Api-Key, ...) are not sent.' -r
complete -c tinytool -n "__fish_tinytool_using_subcommand webfetch" -l body -d 'Request body, sent when not empty.' -r
complete -c tinytool -n "__fish_tinytool_using_subcommand webfetch" -l format -d 'How to return an HTML page: text (default; plain text, links numbered and listed at the end), markdown (inline links), or html (raw).' -r -f -a "text\t''
markdown\t''
html\t''"
complete -c tinytool -n "__fish_tinytool_using_subcommand webfetch" -s h -l help -d 'Print help'
complete -c tinytool -n "__fish_tinytool_using_subcommand webfetch" -l text -d 'Print only the output text; the exit status carries the outcome'
complete -c tinytool -n "__fish_tinytool_using_subcommand webfetch" -l stdin -d 'Also read a JSON object of parameters from standard input when flags are given'
complete -c tinytool -n "__fish_tinytool_using_subcommand task" -l dir -d 'Working directory: paths in tool calls resolve here [default: current directory]' -r
complete -c tinytool -n "__fish_tinytool_using_subcommand task" -l session -d 'Session id: todos, agent mode, jobs and approvals are per session [default: default]' -r
complete -c tinytool -n "__fish_tinytool_using_subcommand task" -l policy -d 'The permission policy, in place of the user policy' -r
complete -c tinytool -n "__fish_tinytool_using_subcommand task" -l state -d 'The state database [default: DIR/.tinytool/state.db]' -r
complete -c tinytool -n "__fish_tinytool_using_subcommand task" -l events -d 'Append bus events to FILE as JSON lines (`-` = standard error)' -r
complete -c tinytool -n "__fish_tinytool_using_subcommand task" -l answers -d 'Answers for the question tool: a JSON list, used in order per session' -r
complete -c tinytool -n "__fish_tinytool_using_subcommand task" -l description -d 'A short (3-5 word) description of the task. Required to start one.' -r
complete -c tinytool -n "__fish_tinytool_using_subcommand task" -l prompt -d 'The complete task for the subagent, which sees nothing else. Required to start one.' -r
complete -c tinytool -n "__fish_tinytool_using_subcommand task" -l subagent-type -d 'Which configured subagent runs it (a key of `subagents` in the config; default build).' -r
complete -c tinytool -n "__fish_tinytool_using_subcommand task" -l task-id -d 'A background job\'s id (job_N): returns its status and result; no prompt or description needed.' -r
complete -c tinytool -n "__fish_tinytool_using_subcommand task" -l background -d 'Run in the background and return a job id at once (default false).' -r -f -a "true\t''
false\t''"
complete -c tinytool -n "__fish_tinytool_using_subcommand task" -l cancel -d 'With task_id: cancel that running job.' -r -f -a "true\t''
false\t''"
complete -c tinytool -n "__fish_tinytool_using_subcommand task" -s h -l help -d 'Print help'
complete -c tinytool -n "__fish_tinytool_using_subcommand task" -l text -d 'Print only the output text; the exit status carries the outcome'
complete -c tinytool -n "__fish_tinytool_using_subcommand task" -l stdin -d 'Also read a JSON object of parameters from standard input when flags are given'
complete -c tinytool -n "__fish_tinytool_using_subcommand todowrite" -l dir -d 'Working directory: paths in tool calls resolve here [default: current directory]' -r
complete -c tinytool -n "__fish_tinytool_using_subcommand todowrite" -l session -d 'Session id: todos, agent mode, jobs and approvals are per session [default: default]' -r
complete -c tinytool -n "__fish_tinytool_using_subcommand todowrite" -l policy -d 'The permission policy, in place of the user policy' -r
complete -c tinytool -n "__fish_tinytool_using_subcommand todowrite" -l state -d 'The state database [default: DIR/.tinytool/state.db]' -r
complete -c tinytool -n "__fish_tinytool_using_subcommand todowrite" -l events -d 'Append bus events to FILE as JSON lines (`-` = standard error)' -r
complete -c tinytool -n "__fish_tinytool_using_subcommand todowrite" -l answers -d 'Answers for the question tool: a JSON list, used in order per session' -r
complete -c tinytool -n "__fish_tinytool_using_subcommand todowrite" -l todos -d 'The complete todo list, in order. [required]' -r
complete -c tinytool -n "__fish_tinytool_using_subcommand todowrite" -s h -l help -d 'Print help'
complete -c tinytool -n "__fish_tinytool_using_subcommand todowrite" -l text -d 'Print only the output text; the exit status carries the outcome'
complete -c tinytool -n "__fish_tinytool_using_subcommand todowrite" -l stdin -d 'Also read a JSON object of parameters from standard input when flags are given'
complete -c tinytool -n "__fish_tinytool_using_subcommand report_findings" -l dir -d 'Working directory: paths in tool calls resolve here [default: current directory]' -r
complete -c tinytool -n "__fish_tinytool_using_subcommand report_findings" -l session -d 'Session id: todos, agent mode, jobs and approvals are per session [default: default]' -r
complete -c tinytool -n "__fish_tinytool_using_subcommand report_findings" -l policy -d 'The permission policy, in place of the user policy' -r
complete -c tinytool -n "__fish_tinytool_using_subcommand report_findings" -l state -d 'The state database [default: DIR/.tinytool/state.db]' -r
complete -c tinytool -n "__fish_tinytool_using_subcommand report_findings" -l events -d 'Append bus events to FILE as JSON lines (`-` = standard error)' -r
complete -c tinytool -n "__fish_tinytool_using_subcommand report_findings" -l answers -d 'Answers for the question tool: a JSON list, used in order per session' -r
complete -c tinytool -n "__fish_tinytool_using_subcommand report_findings" -l findings -d 'The findings (at most 50). [required]' -r
complete -c tinytool -n "__fish_tinytool_using_subcommand report_findings" -l level -d 'Effort level of the review (optional).' -r
complete -c tinytool -n "__fish_tinytool_using_subcommand report_findings" -s h -l help -d 'Print help'
complete -c tinytool -n "__fish_tinytool_using_subcommand report_findings" -l text -d 'Print only the output text; the exit status carries the outcome'
complete -c tinytool -n "__fish_tinytool_using_subcommand report_findings" -l stdin -d 'Also read a JSON object of parameters from standard input when flags are given'
complete -c tinytool -n "__fish_tinytool_using_subcommand monitor" -l dir -d 'Working directory: paths in tool calls resolve here [default: current directory]' -r
complete -c tinytool -n "__fish_tinytool_using_subcommand monitor" -l session -d 'Session id: todos, agent mode, jobs and approvals are per session [default: default]' -r
complete -c tinytool -n "__fish_tinytool_using_subcommand monitor" -l policy -d 'The permission policy, in place of the user policy' -r
complete -c tinytool -n "__fish_tinytool_using_subcommand monitor" -l state -d 'The state database [default: DIR/.tinytool/state.db]' -r
complete -c tinytool -n "__fish_tinytool_using_subcommand monitor" -l events -d 'Append bus events to FILE as JSON lines (`-` = standard error)' -r
complete -c tinytool -n "__fish_tinytool_using_subcommand monitor" -l answers -d 'Answers for the question tool: a JSON list, used in order per session' -r
complete -c tinytool -n "__fish_tinytool_using_subcommand monitor" -l action -d 'What to do (default: start, or stop when only monitor_id is given).' -r -f -a "start\t''
list\t''
read\t''
stop\t''"
complete -c tinytool -n "__fish_tinytool_using_subcommand monitor" -l command -d 'The shell command to run (sh -c, in the working directory). Required to start.' -r
complete -c tinytool -n "__fish_tinytool_using_subcommand monitor" -l timeout-ms -d 'Stop the command after this many milliseconds (default 300000, at most 1800000; 0 or less means the default).' -r
complete -c tinytool -n "__fish_tinytool_using_subcommand monitor" -l description -d 'A short label for the monitor (default: the command).' -r
complete -c tinytool -n "__fish_tinytool_using_subcommand monitor" -l monitor-id -d 'The monitor to read or stop (mon_N).' -r
complete -c tinytool -n "__fish_tinytool_using_subcommand monitor" -s h -l help -d 'Print help'
complete -c tinytool -n "__fish_tinytool_using_subcommand monitor" -l text -d 'Print only the output text; the exit status carries the outcome'
complete -c tinytool -n "__fish_tinytool_using_subcommand monitor" -l stdin -d 'Also read a JSON object of parameters from standard input when flags are given'
complete -c tinytool -n "__fish_tinytool_using_subcommand notepad" -l dir -d 'Working directory: paths in tool calls resolve here [default: current directory]' -r
complete -c tinytool -n "__fish_tinytool_using_subcommand notepad" -l session -d 'Session id: todos, agent mode, jobs and approvals are per session [default: default]' -r
complete -c tinytool -n "__fish_tinytool_using_subcommand notepad" -l policy -d 'The permission policy, in place of the user policy' -r
complete -c tinytool -n "__fish_tinytool_using_subcommand notepad" -l state -d 'The state database [default: DIR/.tinytool/state.db]' -r
complete -c tinytool -n "__fish_tinytool_using_subcommand notepad" -l events -d 'Append bus events to FILE as JSON lines (`-` = standard error)' -r
complete -c tinytool -n "__fish_tinytool_using_subcommand notepad" -l answers -d 'Answers for the question tool: a JSON list, used in order per session' -r
complete -c tinytool -n "__fish_tinytool_using_subcommand notepad" -l action -d 'What to do. [required]' -r -f -a "read\t''
write\t''
list\t''
delete\t''"
complete -c tinytool -n "__fish_tinytool_using_subcommand notepad" -l key -d 'The note\'s key (read, write, delete).' -r
complete -c tinytool -n "__fish_tinytool_using_subcommand notepad" -l content -d 'The note\'s text (write).' -r
complete -c tinytool -n "__fish_tinytool_using_subcommand notepad" -s h -l help -d 'Print help'
complete -c tinytool -n "__fish_tinytool_using_subcommand notepad" -l text -d 'Print only the output text; the exit status carries the outcome'
complete -c tinytool -n "__fish_tinytool_using_subcommand notepad" -l stdin -d 'Also read a JSON object of parameters from standard input when flags are given'
complete -c tinytool -n "__fish_tinytool_using_subcommand plan_enter" -l dir -d 'Working directory: paths in tool calls resolve here [default: current directory]' -r
complete -c tinytool -n "__fish_tinytool_using_subcommand plan_enter" -l session -d 'Session id: todos, agent mode, jobs and approvals are per session [default: default]' -r
complete -c tinytool -n "__fish_tinytool_using_subcommand plan_enter" -l policy -d 'The permission policy, in place of the user policy' -r
complete -c tinytool -n "__fish_tinytool_using_subcommand plan_enter" -l state -d 'The state database [default: DIR/.tinytool/state.db]' -r
complete -c tinytool -n "__fish_tinytool_using_subcommand plan_enter" -l events -d 'Append bus events to FILE as JSON lines (`-` = standard error)' -r
complete -c tinytool -n "__fish_tinytool_using_subcommand plan_enter" -l answers -d 'Answers for the question tool: a JSON list, used in order per session' -r
complete -c tinytool -n "__fish_tinytool_using_subcommand plan_enter" -s h -l help -d 'Print help'
complete -c tinytool -n "__fish_tinytool_using_subcommand plan_enter" -l text -d 'Print only the output text; the exit status carries the outcome'
complete -c tinytool -n "__fish_tinytool_using_subcommand plan_enter" -l stdin -d 'Also read a JSON object of parameters from standard input when flags are given'
complete -c tinytool -n "__fish_tinytool_using_subcommand plan_exit" -l dir -d 'Working directory: paths in tool calls resolve here [default: current directory]' -r
complete -c tinytool -n "__fish_tinytool_using_subcommand plan_exit" -l session -d 'Session id: todos, agent mode, jobs and approvals are per session [default: default]' -r
complete -c tinytool -n "__fish_tinytool_using_subcommand plan_exit" -l policy -d 'The permission policy, in place of the user policy' -r
complete -c tinytool -n "__fish_tinytool_using_subcommand plan_exit" -l state -d 'The state database [default: DIR/.tinytool/state.db]' -r
complete -c tinytool -n "__fish_tinytool_using_subcommand plan_exit" -l events -d 'Append bus events to FILE as JSON lines (`-` = standard error)' -r
complete -c tinytool -n "__fish_tinytool_using_subcommand plan_exit" -l answers -d 'Answers for the question tool: a JSON list, used in order per session' -r
complete -c tinytool -n "__fish_tinytool_using_subcommand plan_exit" -s h -l help -d 'Print help'
complete -c tinytool -n "__fish_tinytool_using_subcommand plan_exit" -l text -d 'Print only the output text; the exit status carries the outcome'
complete -c tinytool -n "__fish_tinytool_using_subcommand plan_exit" -l stdin -d 'Also read a JSON object of parameters from standard input when flags are given'
complete -c tinytool -n "__fish_tinytool_using_subcommand exit" -l dir -d 'Working directory: paths in tool calls resolve here [default: current directory]' -r
complete -c tinytool -n "__fish_tinytool_using_subcommand exit" -l session -d 'Session id: todos, agent mode, jobs and approvals are per session [default: default]' -r
complete -c tinytool -n "__fish_tinytool_using_subcommand exit" -l policy -d 'The permission policy, in place of the user policy' -r
complete -c tinytool -n "__fish_tinytool_using_subcommand exit" -l state -d 'The state database [default: DIR/.tinytool/state.db]' -r
complete -c tinytool -n "__fish_tinytool_using_subcommand exit" -l events -d 'Append bus events to FILE as JSON lines (`-` = standard error)' -r
complete -c tinytool -n "__fish_tinytool_using_subcommand exit" -l answers -d 'Answers for the question tool: a JSON list, used in order per session' -r
complete -c tinytool -n "__fish_tinytool_using_subcommand exit" -l reason -d 'Why the work ends (default "task complete").' -r
complete -c tinytool -n "__fish_tinytool_using_subcommand exit" -s h -l help -d 'Print help'
complete -c tinytool -n "__fish_tinytool_using_subcommand exit" -l text -d 'Print only the output text; the exit status carries the outcome'
complete -c tinytool -n "__fish_tinytool_using_subcommand exit" -l stdin -d 'Also read a JSON object of parameters from standard input when flags are given'
complete -c tinytool -n "__fish_tinytool_using_subcommand skill" -l dir -d 'Working directory: paths in tool calls resolve here [default: current directory]' -r
complete -c tinytool -n "__fish_tinytool_using_subcommand skill" -l session -d 'Session id: todos, agent mode, jobs and approvals are per session [default: default]' -r
complete -c tinytool -n "__fish_tinytool_using_subcommand skill" -l policy -d 'The permission policy, in place of the user policy' -r
complete -c tinytool -n "__fish_tinytool_using_subcommand skill" -l state -d 'The state database [default: DIR/.tinytool/state.db]' -r
complete -c tinytool -n "__fish_tinytool_using_subcommand skill" -l events -d 'Append bus events to FILE as JSON lines (`-` = standard error)' -r
complete -c tinytool -n "__fish_tinytool_using_subcommand skill" -l answers -d 'Answers for the question tool: a JSON list, used in order per session' -r
complete -c tinytool -n "__fish_tinytool_using_subcommand skill" -l name -d 'The skill\'s name. [required]' -r
complete -c tinytool -n "__fish_tinytool_using_subcommand skill" -l arguments -d 'Space-separated arguments ($1, $2, ..., $ARGUMENTS).' -r
complete -c tinytool -n "__fish_tinytool_using_subcommand skill" -s h -l help -d 'Print help'
complete -c tinytool -n "__fish_tinytool_using_subcommand skill" -l text -d 'Print only the output text; the exit status carries the outcome'
complete -c tinytool -n "__fish_tinytool_using_subcommand skill" -l stdin -d 'Also read a JSON object of parameters from standard input when flags are given'
complete -c tinytool -n "__fish_tinytool_using_subcommand checkpoint" -l dir -d 'Working directory: paths in tool calls resolve here [default: current directory]' -r
complete -c tinytool -n "__fish_tinytool_using_subcommand checkpoint" -l session -d 'Session id: todos, agent mode, jobs and approvals are per session [default: default]' -r
complete -c tinytool -n "__fish_tinytool_using_subcommand checkpoint" -l policy -d 'The permission policy, in place of the user policy' -r
complete -c tinytool -n "__fish_tinytool_using_subcommand checkpoint" -l state -d 'The state database [default: DIR/.tinytool/state.db]' -r
complete -c tinytool -n "__fish_tinytool_using_subcommand checkpoint" -l events -d 'Append bus events to FILE as JSON lines (`-` = standard error)' -r
complete -c tinytool -n "__fish_tinytool_using_subcommand checkpoint" -l answers -d 'Answers for the question tool: a JSON list, used in order per session' -r
complete -c tinytool -n "__fish_tinytool_using_subcommand checkpoint" -l action -d 'What to do (default: list).' -r -f -a "list\t''
show\t''
undo\t''"
complete -c tinytool -n "__fish_tinytool_using_subcommand checkpoint" -l id -d 'The checkpoint to show or undo (undo\'s default: the newest call checkpoint not undone yet).' -r
complete -c tinytool -n "__fish_tinytool_using_subcommand checkpoint" -l dry-run -d 'undo: show the diff it would apply and change nothing.' -r -f -a "true\t''
false\t''"
complete -c tinytool -n "__fish_tinytool_using_subcommand checkpoint" -l force -d 'undo: restore paths changed since by something else too (conflicts).' -r -f -a "true\t''
false\t''"
complete -c tinytool -n "__fish_tinytool_using_subcommand checkpoint" -l session-id -d 'list: only this session\'s checkpoints.' -r
complete -c tinytool -n "__fish_tinytool_using_subcommand checkpoint" -l path -d 'show: only the diff of this file, or of the files below this folder.' -r
complete -c tinytool -n "__fish_tinytool_using_subcommand checkpoint" -l limit -d 'list: at most this many checkpoints (default 20).' -r
complete -c tinytool -n "__fish_tinytool_using_subcommand checkpoint" -l before -d 'list: only checkpoints older than this id (the next page).' -r
complete -c tinytool -n "__fish_tinytool_using_subcommand checkpoint" -s h -l help -d 'Print help'
complete -c tinytool -n "__fish_tinytool_using_subcommand checkpoint" -l text -d 'Print only the output text; the exit status carries the outcome'
complete -c tinytool -n "__fish_tinytool_using_subcommand checkpoint" -l stdin -d 'Also read a JSON object of parameters from standard input when flags are given'
complete -c tinytool -n "__fish_tinytool_using_subcommand diagnostics" -l dir -d 'Working directory: paths in tool calls resolve here [default: current directory]' -r
complete -c tinytool -n "__fish_tinytool_using_subcommand diagnostics" -l session -d 'Session id: todos, agent mode, jobs and approvals are per session [default: default]' -r
complete -c tinytool -n "__fish_tinytool_using_subcommand diagnostics" -l policy -d 'The permission policy, in place of the user policy' -r
complete -c tinytool -n "__fish_tinytool_using_subcommand diagnostics" -l state -d 'The state database [default: DIR/.tinytool/state.db]' -r
complete -c tinytool -n "__fish_tinytool_using_subcommand diagnostics" -l events -d 'Append bus events to FILE as JSON lines (`-` = standard error)' -r
complete -c tinytool -n "__fish_tinytool_using_subcommand diagnostics" -l answers -d 'Answers for the question tool: a JSON list, used in order per session' -r
complete -c tinytool -n "__fish_tinytool_using_subcommand diagnostics" -l path -d 'File or folder to check (default: the working directory).' -r
complete -c tinytool -n "__fish_tinytool_using_subcommand diagnostics" -l paths -d 'Several files or folders to check, instead of path.' -r
complete -c tinytool -n "__fish_tinytool_using_subcommand diagnostics" -s h -l help -d 'Print help'
complete -c tinytool -n "__fish_tinytool_using_subcommand diagnostics" -l text -d 'Print only the output text; the exit status carries the outcome'
complete -c tinytool -n "__fish_tinytool_using_subcommand diagnostics" -l stdin -d 'Also read a JSON object of parameters from standard input when flags are given'
complete -c tinytool -n "__fish_tinytool_using_subcommand websearch" -l dir -d 'Working directory: paths in tool calls resolve here [default: current directory]' -r
complete -c tinytool -n "__fish_tinytool_using_subcommand websearch" -l session -d 'Session id: todos, agent mode, jobs and approvals are per session [default: default]' -r
complete -c tinytool -n "__fish_tinytool_using_subcommand websearch" -l policy -d 'The permission policy, in place of the user policy' -r
complete -c tinytool -n "__fish_tinytool_using_subcommand websearch" -l state -d 'The state database [default: DIR/.tinytool/state.db]' -r
complete -c tinytool -n "__fish_tinytool_using_subcommand websearch" -l events -d 'Append bus events to FILE as JSON lines (`-` = standard error)' -r
complete -c tinytool -n "__fish_tinytool_using_subcommand websearch" -l answers -d 'Answers for the question tool: a JSON list, used in order per session' -r
complete -c tinytool -n "__fish_tinytool_using_subcommand websearch" -l query -d 'The search query. [required]' -r
complete -c tinytool -n "__fish_tinytool_using_subcommand websearch" -l num-results -d 'Number of results (default 8).' -r
complete -c tinytool -n "__fish_tinytool_using_subcommand websearch" -s h -l help -d 'Print help'
complete -c tinytool -n "__fish_tinytool_using_subcommand websearch" -l text -d 'Print only the output text; the exit status carries the outcome'
complete -c tinytool -n "__fish_tinytool_using_subcommand websearch" -l stdin -d 'Also read a JSON object of parameters from standard input when flags are given'
complete -c tinytool -n "__fish_tinytool_using_subcommand exec" -l dir -d 'Working directory: paths in tool calls resolve here [default: current directory]' -r
complete -c tinytool -n "__fish_tinytool_using_subcommand exec" -l session -d 'Session id: todos, agent mode, jobs and approvals are per session [default: default]' -r
complete -c tinytool -n "__fish_tinytool_using_subcommand exec" -l policy -d 'The permission policy, in place of the user policy' -r
complete -c tinytool -n "__fish_tinytool_using_subcommand exec" -l state -d 'The state database [default: DIR/.tinytool/state.db]' -r
complete -c tinytool -n "__fish_tinytool_using_subcommand exec" -l events -d 'Append bus events to FILE as JSON lines (`-` = standard error)' -r
complete -c tinytool -n "__fish_tinytool_using_subcommand exec" -l answers -d 'Answers for the question tool: a JSON list, used in order per session' -r
complete -c tinytool -n "__fish_tinytool_using_subcommand exec" -l jsonl -d 'Read one call per line until end of input (or the exit tool), answering each'
complete -c tinytool -n "__fish_tinytool_using_subcommand exec" -l text -d 'Print only the output text; the exit status carries the outcome'
complete -c tinytool -n "__fish_tinytool_using_subcommand exec" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c tinytool -n "__fish_tinytool_using_subcommand policy; and not __fish_seen_subcommand_from check explain help" -l dir -d 'Working directory: paths in tool calls resolve here [default: current directory]' -r
complete -c tinytool -n "__fish_tinytool_using_subcommand policy; and not __fish_seen_subcommand_from check explain help" -l session -d 'Session id: todos, agent mode, jobs and approvals are per session [default: default]' -r
complete -c tinytool -n "__fish_tinytool_using_subcommand policy; and not __fish_seen_subcommand_from check explain help" -l policy -d 'The permission policy, in place of the user policy' -r
complete -c tinytool -n "__fish_tinytool_using_subcommand policy; and not __fish_seen_subcommand_from check explain help" -l state -d 'The state database [default: DIR/.tinytool/state.db]' -r
complete -c tinytool -n "__fish_tinytool_using_subcommand policy; and not __fish_seen_subcommand_from check explain help" -l events -d 'Append bus events to FILE as JSON lines (`-` = standard error)' -r
complete -c tinytool -n "__fish_tinytool_using_subcommand policy; and not __fish_seen_subcommand_from check explain help" -l answers -d 'Answers for the question tool: a JSON list, used in order per session' -r
complete -c tinytool -n "__fish_tinytool_using_subcommand policy; and not __fish_seen_subcommand_from check explain help" -l text -d 'Print only the output text; the exit status carries the outcome'
complete -c tinytool -n "__fish_tinytool_using_subcommand policy; and not __fish_seen_subcommand_from check explain help" -s h -l help -d 'Print help'
complete -c tinytool -n "__fish_tinytool_using_subcommand policy; and not __fish_seen_subcommand_from check explain help" -f -a "check" -d 'Check policy files for rules that would not do what they say'
complete -c tinytool -n "__fish_tinytool_using_subcommand policy; and not __fish_seen_subcommand_from check explain help" -f -a "explain" -d 'Show the decision on a tool call without running it'
complete -c tinytool -n "__fish_tinytool_using_subcommand policy; and not __fish_seen_subcommand_from check explain help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c tinytool -n "__fish_tinytool_using_subcommand policy; and __fish_seen_subcommand_from check" -l dir -d 'Working directory: paths in tool calls resolve here [default: current directory]' -r
complete -c tinytool -n "__fish_tinytool_using_subcommand policy; and __fish_seen_subcommand_from check" -l session -d 'Session id: todos, agent mode, jobs and approvals are per session [default: default]' -r
complete -c tinytool -n "__fish_tinytool_using_subcommand policy; and __fish_seen_subcommand_from check" -l policy -d 'The permission policy, in place of the user policy' -r
complete -c tinytool -n "__fish_tinytool_using_subcommand policy; and __fish_seen_subcommand_from check" -l state -d 'The state database [default: DIR/.tinytool/state.db]' -r
complete -c tinytool -n "__fish_tinytool_using_subcommand policy; and __fish_seen_subcommand_from check" -l events -d 'Append bus events to FILE as JSON lines (`-` = standard error)' -r
complete -c tinytool -n "__fish_tinytool_using_subcommand policy; and __fish_seen_subcommand_from check" -l answers -d 'Answers for the question tool: a JSON list, used in order per session' -r
complete -c tinytool -n "__fish_tinytool_using_subcommand policy; and __fish_seen_subcommand_from check" -l json -d 'Print the findings as a JSON array'
complete -c tinytool -n "__fish_tinytool_using_subcommand policy; and __fish_seen_subcommand_from check" -l text -d 'Print only the output text; the exit status carries the outcome'
complete -c tinytool -n "__fish_tinytool_using_subcommand policy; and __fish_seen_subcommand_from check" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c tinytool -n "__fish_tinytool_using_subcommand policy; and __fish_seen_subcommand_from explain" -l dir -d 'Working directory: paths in tool calls resolve here [default: current directory]' -r
complete -c tinytool -n "__fish_tinytool_using_subcommand policy; and __fish_seen_subcommand_from explain" -l session -d 'Session id: todos, agent mode, jobs and approvals are per session [default: default]' -r
complete -c tinytool -n "__fish_tinytool_using_subcommand policy; and __fish_seen_subcommand_from explain" -l policy -d 'The permission policy, in place of the user policy' -r
complete -c tinytool -n "__fish_tinytool_using_subcommand policy; and __fish_seen_subcommand_from explain" -l state -d 'The state database [default: DIR/.tinytool/state.db]' -r
complete -c tinytool -n "__fish_tinytool_using_subcommand policy; and __fish_seen_subcommand_from explain" -l events -d 'Append bus events to FILE as JSON lines (`-` = standard error)' -r
complete -c tinytool -n "__fish_tinytool_using_subcommand policy; and __fish_seen_subcommand_from explain" -l answers -d 'Answers for the question tool: a JSON list, used in order per session' -r
complete -c tinytool -n "__fish_tinytool_using_subcommand policy; and __fish_seen_subcommand_from explain" -l json -d 'Print the decision as JSON'
complete -c tinytool -n "__fish_tinytool_using_subcommand policy; and __fish_seen_subcommand_from explain" -l text -d 'Print only the output text; the exit status carries the outcome'
complete -c tinytool -n "__fish_tinytool_using_subcommand policy; and __fish_seen_subcommand_from explain" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c tinytool -n "__fish_tinytool_using_subcommand policy; and __fish_seen_subcommand_from help" -f -a "check" -d 'Check policy files for rules that would not do what they say'
complete -c tinytool -n "__fish_tinytool_using_subcommand policy; and __fish_seen_subcommand_from help" -f -a "explain" -d 'Show the decision on a tool call without running it'
complete -c tinytool -n "__fish_tinytool_using_subcommand policy; and __fish_seen_subcommand_from help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c tinytool -n "__fish_tinytool_using_subcommand state" -l dir -d 'Working directory: paths in tool calls resolve here [default: current directory]' -r
complete -c tinytool -n "__fish_tinytool_using_subcommand state" -l session -d 'Session id: todos, agent mode, jobs and approvals are per session [default: default]' -r
complete -c tinytool -n "__fish_tinytool_using_subcommand state" -l policy -d 'The permission policy, in place of the user policy' -r
complete -c tinytool -n "__fish_tinytool_using_subcommand state" -l state -d 'The state database [default: DIR/.tinytool/state.db]' -r
complete -c tinytool -n "__fish_tinytool_using_subcommand state" -l events -d 'Append bus events to FILE as JSON lines (`-` = standard error)' -r
complete -c tinytool -n "__fish_tinytool_using_subcommand state" -l answers -d 'Answers for the question tool: a JSON list, used in order per session' -r
complete -c tinytool -n "__fish_tinytool_using_subcommand state" -l text -d 'Print only the output text; the exit status carries the outcome'
complete -c tinytool -n "__fish_tinytool_using_subcommand state" -s h -l help -d 'Print help'
complete -c tinytool -n "__fish_tinytool_using_subcommand sandbox" -l dir -d 'Working directory: paths in tool calls resolve here [default: current directory]' -r
complete -c tinytool -n "__fish_tinytool_using_subcommand sandbox" -l session -d 'Session id: todos, agent mode, jobs and approvals are per session [default: default]' -r
complete -c tinytool -n "__fish_tinytool_using_subcommand sandbox" -l policy -d 'The permission policy, in place of the user policy' -r
complete -c tinytool -n "__fish_tinytool_using_subcommand sandbox" -l state -d 'The state database [default: DIR/.tinytool/state.db]' -r
complete -c tinytool -n "__fish_tinytool_using_subcommand sandbox" -l events -d 'Append bus events to FILE as JSON lines (`-` = standard error)' -r
complete -c tinytool -n "__fish_tinytool_using_subcommand sandbox" -l answers -d 'Answers for the question tool: a JSON list, used in order per session' -r
complete -c tinytool -n "__fish_tinytool_using_subcommand sandbox" -l json -d 'Print one JSON object instead of lines'
complete -c tinytool -n "__fish_tinytool_using_subcommand sandbox" -l text -d 'Print only the output text; the exit status carries the outcome'
complete -c tinytool -n "__fish_tinytool_using_subcommand sandbox" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c tinytool -n "__fish_tinytool_using_subcommand lsp; and not __fish_seen_subcommand_from status stop help" -l dir -d 'Working directory: paths in tool calls resolve here [default: current directory]' -r
complete -c tinytool -n "__fish_tinytool_using_subcommand lsp; and not __fish_seen_subcommand_from status stop help" -l session -d 'Session id: todos, agent mode, jobs and approvals are per session [default: default]' -r
complete -c tinytool -n "__fish_tinytool_using_subcommand lsp; and not __fish_seen_subcommand_from status stop help" -l policy -d 'The permission policy, in place of the user policy' -r
complete -c tinytool -n "__fish_tinytool_using_subcommand lsp; and not __fish_seen_subcommand_from status stop help" -l state -d 'The state database [default: DIR/.tinytool/state.db]' -r
complete -c tinytool -n "__fish_tinytool_using_subcommand lsp; and not __fish_seen_subcommand_from status stop help" -l events -d 'Append bus events to FILE as JSON lines (`-` = standard error)' -r
complete -c tinytool -n "__fish_tinytool_using_subcommand lsp; and not __fish_seen_subcommand_from status stop help" -l answers -d 'Answers for the question tool: a JSON list, used in order per session' -r
complete -c tinytool -n "__fish_tinytool_using_subcommand lsp; and not __fish_seen_subcommand_from status stop help" -l text -d 'Print only the output text; the exit status carries the outcome'
complete -c tinytool -n "__fish_tinytool_using_subcommand lsp; and not __fish_seen_subcommand_from status stop help" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c tinytool -n "__fish_tinytool_using_subcommand lsp; and not __fish_seen_subcommand_from status stop help" -f -a "status" -d 'Print the servers of the project, per language'
complete -c tinytool -n "__fish_tinytool_using_subcommand lsp; and not __fish_seen_subcommand_from status stop help" -f -a "stop" -d 'Stop every language server of the project'
complete -c tinytool -n "__fish_tinytool_using_subcommand lsp; and not __fish_seen_subcommand_from status stop help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c tinytool -n "__fish_tinytool_using_subcommand lsp; and __fish_seen_subcommand_from status" -l dir -d 'Working directory: paths in tool calls resolve here [default: current directory]' -r
complete -c tinytool -n "__fish_tinytool_using_subcommand lsp; and __fish_seen_subcommand_from status" -l session -d 'Session id: todos, agent mode, jobs and approvals are per session [default: default]' -r
complete -c tinytool -n "__fish_tinytool_using_subcommand lsp; and __fish_seen_subcommand_from status" -l policy -d 'The permission policy, in place of the user policy' -r
complete -c tinytool -n "__fish_tinytool_using_subcommand lsp; and __fish_seen_subcommand_from status" -l state -d 'The state database [default: DIR/.tinytool/state.db]' -r
complete -c tinytool -n "__fish_tinytool_using_subcommand lsp; and __fish_seen_subcommand_from status" -l events -d 'Append bus events to FILE as JSON lines (`-` = standard error)' -r
complete -c tinytool -n "__fish_tinytool_using_subcommand lsp; and __fish_seen_subcommand_from status" -l answers -d 'Answers for the question tool: a JSON list, used in order per session' -r
complete -c tinytool -n "__fish_tinytool_using_subcommand lsp; and __fish_seen_subcommand_from status" -l json -d 'Print one JSON object instead of lines'
complete -c tinytool -n "__fish_tinytool_using_subcommand lsp; and __fish_seen_subcommand_from status" -l text -d 'Print only the output text; the exit status carries the outcome'
complete -c tinytool -n "__fish_tinytool_using_subcommand lsp; and __fish_seen_subcommand_from status" -s h -l help -d 'Print help'
complete -c tinytool -n "__fish_tinytool_using_subcommand lsp; and __fish_seen_subcommand_from stop" -l dir -d 'Working directory: paths in tool calls resolve here [default: current directory]' -r
complete -c tinytool -n "__fish_tinytool_using_subcommand lsp; and __fish_seen_subcommand_from stop" -l session -d 'Session id: todos, agent mode, jobs and approvals are per session [default: default]' -r
complete -c tinytool -n "__fish_tinytool_using_subcommand lsp; and __fish_seen_subcommand_from stop" -l policy -d 'The permission policy, in place of the user policy' -r
complete -c tinytool -n "__fish_tinytool_using_subcommand lsp; and __fish_seen_subcommand_from stop" -l state -d 'The state database [default: DIR/.tinytool/state.db]' -r
complete -c tinytool -n "__fish_tinytool_using_subcommand lsp; and __fish_seen_subcommand_from stop" -l events -d 'Append bus events to FILE as JSON lines (`-` = standard error)' -r
complete -c tinytool -n "__fish_tinytool_using_subcommand lsp; and __fish_seen_subcommand_from stop" -l answers -d 'Answers for the question tool: a JSON list, used in order per session' -r
complete -c tinytool -n "__fish_tinytool_using_subcommand lsp; and __fish_seen_subcommand_from stop" -l text -d 'Print only the output text; the exit status carries the outcome'
complete -c tinytool -n "__fish_tinytool_using_subcommand lsp; and __fish_seen_subcommand_from stop" -s h -l help -d 'Print help'
complete -c tinytool -n "__fish_tinytool_using_subcommand lsp; and __fish_seen_subcommand_from help" -f -a "status" -d 'Print the servers of the project, per language'
complete -c tinytool -n "__fish_tinytool_using_subcommand lsp; and __fish_seen_subcommand_from help" -f -a "stop" -d 'Stop every language server of the project'
complete -c tinytool -n "__fish_tinytool_using_subcommand lsp; and __fish_seen_subcommand_from help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c tinytool -n "__fish_tinytool_using_subcommand checkpoints; and not __fish_seen_subcommand_from show help" -l limit -d 'List at most N checkpoints [default: 20]' -r
complete -c tinytool -n "__fish_tinytool_using_subcommand checkpoints; and not __fish_seen_subcommand_from show help" -l before -d 'List the checkpoints older than ID (the next page)' -r
complete -c tinytool -n "__fish_tinytool_using_subcommand checkpoints; and not __fish_seen_subcommand_from show help" -l dir -d 'Working directory: paths in tool calls resolve here [default: current directory]' -r
complete -c tinytool -n "__fish_tinytool_using_subcommand checkpoints; and not __fish_seen_subcommand_from show help" -l session -d 'Session id: todos, agent mode, jobs and approvals are per session [default: default]' -r
complete -c tinytool -n "__fish_tinytool_using_subcommand checkpoints; and not __fish_seen_subcommand_from show help" -l policy -d 'The permission policy, in place of the user policy' -r
complete -c tinytool -n "__fish_tinytool_using_subcommand checkpoints; and not __fish_seen_subcommand_from show help" -l state -d 'The state database [default: DIR/.tinytool/state.db]' -r
complete -c tinytool -n "__fish_tinytool_using_subcommand checkpoints; and not __fish_seen_subcommand_from show help" -l events -d 'Append bus events to FILE as JSON lines (`-` = standard error)' -r
complete -c tinytool -n "__fish_tinytool_using_subcommand checkpoints; and not __fish_seen_subcommand_from show help" -l answers -d 'Answers for the question tool: a JSON list, used in order per session' -r
complete -c tinytool -n "__fish_tinytool_using_subcommand checkpoints; and not __fish_seen_subcommand_from show help" -l json -d 'Print a JSON array of {id, kind, tool, time, paths, ...}'
complete -c tinytool -n "__fish_tinytool_using_subcommand checkpoints; and not __fish_seen_subcommand_from show help" -l text -d 'Print only the output text; the exit status carries the outcome'
complete -c tinytool -n "__fish_tinytool_using_subcommand checkpoints; and not __fish_seen_subcommand_from show help" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c tinytool -n "__fish_tinytool_using_subcommand checkpoints; and not __fish_seen_subcommand_from show help" -f -a "show" -d 'Print the unified diff of one checkpoint'
complete -c tinytool -n "__fish_tinytool_using_subcommand checkpoints; and not __fish_seen_subcommand_from show help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c tinytool -n "__fish_tinytool_using_subcommand checkpoints; and __fish_seen_subcommand_from show" -l dir -d 'Working directory: paths in tool calls resolve here [default: current directory]' -r
complete -c tinytool -n "__fish_tinytool_using_subcommand checkpoints; and __fish_seen_subcommand_from show" -l session -d 'Session id: todos, agent mode, jobs and approvals are per session [default: default]' -r
complete -c tinytool -n "__fish_tinytool_using_subcommand checkpoints; and __fish_seen_subcommand_from show" -l policy -d 'The permission policy, in place of the user policy' -r
complete -c tinytool -n "__fish_tinytool_using_subcommand checkpoints; and __fish_seen_subcommand_from show" -l state -d 'The state database [default: DIR/.tinytool/state.db]' -r
complete -c tinytool -n "__fish_tinytool_using_subcommand checkpoints; and __fish_seen_subcommand_from show" -l events -d 'Append bus events to FILE as JSON lines (`-` = standard error)' -r
complete -c tinytool -n "__fish_tinytool_using_subcommand checkpoints; and __fish_seen_subcommand_from show" -l answers -d 'Answers for the question tool: a JSON list, used in order per session' -r
complete -c tinytool -n "__fish_tinytool_using_subcommand checkpoints; and __fish_seen_subcommand_from show" -l text -d 'Print only the output text; the exit status carries the outcome'
complete -c tinytool -n "__fish_tinytool_using_subcommand checkpoints; and __fish_seen_subcommand_from show" -s h -l help -d 'Print help'
complete -c tinytool -n "__fish_tinytool_using_subcommand checkpoints; and __fish_seen_subcommand_from help" -f -a "show" -d 'Print the unified diff of one checkpoint'
complete -c tinytool -n "__fish_tinytool_using_subcommand checkpoints; and __fish_seen_subcommand_from help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c tinytool -n "__fish_tinytool_using_subcommand undo" -l dir -d 'Working directory: paths in tool calls resolve here [default: current directory]' -r
complete -c tinytool -n "__fish_tinytool_using_subcommand undo" -l session -d 'Session id: todos, agent mode, jobs and approvals are per session [default: default]' -r
complete -c tinytool -n "__fish_tinytool_using_subcommand undo" -l policy -d 'The permission policy, in place of the user policy' -r
complete -c tinytool -n "__fish_tinytool_using_subcommand undo" -l state -d 'The state database [default: DIR/.tinytool/state.db]' -r
complete -c tinytool -n "__fish_tinytool_using_subcommand undo" -l events -d 'Append bus events to FILE as JSON lines (`-` = standard error)' -r
complete -c tinytool -n "__fish_tinytool_using_subcommand undo" -l answers -d 'Answers for the question tool: a JSON list, used in order per session' -r
complete -c tinytool -n "__fish_tinytool_using_subcommand undo" -l dry-run -d 'List what the undo would restore and remove (paths and sizes) and change nothing'
complete -c tinytool -n "__fish_tinytool_using_subcommand undo" -l force -d 'Restore conflicting paths too'
complete -c tinytool -n "__fish_tinytool_using_subcommand undo" -l text -d 'Print only the output text; the exit status carries the outcome'
complete -c tinytool -n "__fish_tinytool_using_subcommand undo" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c tinytool -n "__fish_tinytool_using_subcommand tools" -l format -d 'Shape of each definition' -r -f -a "openai\t''
openai-responses\t''
anthropic\t''
gemini\t''
mcp\t''
json\t''"
complete -c tinytool -n "__fish_tinytool_using_subcommand tools" -l dir -d 'Working directory: paths in tool calls resolve here [default: current directory]' -r
complete -c tinytool -n "__fish_tinytool_using_subcommand tools" -l session -d 'Session id: todos, agent mode, jobs and approvals are per session [default: default]' -r
complete -c tinytool -n "__fish_tinytool_using_subcommand tools" -l policy -d 'The permission policy, in place of the user policy' -r
complete -c tinytool -n "__fish_tinytool_using_subcommand tools" -l state -d 'The state database [default: DIR/.tinytool/state.db]' -r
complete -c tinytool -n "__fish_tinytool_using_subcommand tools" -l events -d 'Append bus events to FILE as JSON lines (`-` = standard error)' -r
complete -c tinytool -n "__fish_tinytool_using_subcommand tools" -l answers -d 'Answers for the question tool: a JSON list, used in order per session' -r
complete -c tinytool -n "__fish_tinytool_using_subcommand tools" -l strict -d 'With --format openai or openai-responses: strict function schemas (every property required, optionals nullable, objects closed); with --format anthropic: Anthropic\'s strict tool use (objects closed, numeric bounds in the description)'
complete -c tinytool -n "__fish_tinytool_using_subcommand tools" -l text -d 'Print only the output text; the exit status carries the outcome'
complete -c tinytool -n "__fish_tinytool_using_subcommand tools" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c tinytool -n "__fish_tinytool_using_subcommand mcp" -l listen -d 'Serve Streamable HTTP at http://ADDR:PORT/mcp instead of stdio (port 0: any free port, printed on stderr); an address other than loopback needs --token-file' -r
complete -c tinytool -n "__fish_tinytool_using_subcommand mcp" -l token-file -d 'With --listen: every request must carry `Authorization: Bearer TOKEN`, TOKEN being the first line of FILE' -r
complete -c tinytool -n "__fish_tinytool_using_subcommand mcp" -l dir -d 'Working directory: paths in tool calls resolve here [default: current directory]' -r
complete -c tinytool -n "__fish_tinytool_using_subcommand mcp" -l session -d 'Session id: todos, agent mode, jobs and approvals are per session [default: default]' -r
complete -c tinytool -n "__fish_tinytool_using_subcommand mcp" -l policy -d 'The permission policy, in place of the user policy' -r
complete -c tinytool -n "__fish_tinytool_using_subcommand mcp" -l state -d 'The state database [default: DIR/.tinytool/state.db]' -r
complete -c tinytool -n "__fish_tinytool_using_subcommand mcp" -l events -d 'Append bus events to FILE as JSON lines (`-` = standard error)' -r
complete -c tinytool -n "__fish_tinytool_using_subcommand mcp" -l answers -d 'Answers for the question tool: a JSON list, used in order per session' -r
complete -c tinytool -n "__fish_tinytool_using_subcommand mcp" -l text -d 'Print only the output text; the exit status carries the outcome'
complete -c tinytool -n "__fish_tinytool_using_subcommand mcp" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c tinytool -n "__fish_tinytool_using_subcommand completions" -l dir -d 'Working directory: paths in tool calls resolve here [default: current directory]' -r
complete -c tinytool -n "__fish_tinytool_using_subcommand completions" -l session -d 'Session id: todos, agent mode, jobs and approvals are per session [default: default]' -r
complete -c tinytool -n "__fish_tinytool_using_subcommand completions" -l policy -d 'The permission policy, in place of the user policy' -r
complete -c tinytool -n "__fish_tinytool_using_subcommand completions" -l state -d 'The state database [default: DIR/.tinytool/state.db]' -r
complete -c tinytool -n "__fish_tinytool_using_subcommand completions" -l events -d 'Append bus events to FILE as JSON lines (`-` = standard error)' -r
complete -c tinytool -n "__fish_tinytool_using_subcommand completions" -l answers -d 'Answers for the question tool: a JSON list, used in order per session' -r
complete -c tinytool -n "__fish_tinytool_using_subcommand completions" -l text -d 'Print only the output text; the exit status carries the outcome'
complete -c tinytool -n "__fish_tinytool_using_subcommand completions" -s h -l help -d 'Print help'
complete -c tinytool -n "__fish_tinytool_using_subcommand help; and not __fish_seen_subcommand_from read write edit apply_patch bash grep glob question webfetch task todowrite report_findings monitor notepad plan_enter plan_exit exit skill checkpoint diagnostics websearch exec policy state sandbox lsp checkpoints undo tools mcp completions help" -f -a "read" -d 'Read a file\'s lines, numbered'
complete -c tinytool -n "__fish_tinytool_using_subcommand help; and not __fish_seen_subcommand_from read write edit apply_patch bash grep glob question webfetch task todowrite report_findings monitor notepad plan_enter plan_exit exit skill checkpoint diagnostics websearch exec policy state sandbox lsp checkpoints undo tools mcp completions help" -f -a "write" -d 'Create or overwrite a file'
complete -c tinytool -n "__fish_tinytool_using_subcommand help; and not __fish_seen_subcommand_from read write edit apply_patch bash grep glob question webfetch task todowrite report_findings monitor notepad plan_enter plan_exit exit skill checkpoint diagnostics websearch exec policy state sandbox lsp checkpoints undo tools mcp completions help" -f -a "edit" -d 'Replace text in a file'
complete -c tinytool -n "__fish_tinytool_using_subcommand help; and not __fish_seen_subcommand_from read write edit apply_patch bash grep glob question webfetch task todowrite report_findings monitor notepad plan_enter plan_exit exit skill checkpoint diagnostics websearch exec policy state sandbox lsp checkpoints undo tools mcp completions help" -f -a "apply_patch" -d 'Apply a multi-file patch, all or nothing'
complete -c tinytool -n "__fish_tinytool_using_subcommand help; and not __fish_seen_subcommand_from read write edit apply_patch bash grep glob question webfetch task todowrite report_findings monitor notepad plan_enter plan_exit exit skill checkpoint diagnostics websearch exec policy state sandbox lsp checkpoints undo tools mcp completions help" -f -a "bash" -d 'Run a shell command'
complete -c tinytool -n "__fish_tinytool_using_subcommand help; and not __fish_seen_subcommand_from read write edit apply_patch bash grep glob question webfetch task todowrite report_findings monitor notepad plan_enter plan_exit exit skill checkpoint diagnostics websearch exec policy state sandbox lsp checkpoints undo tools mcp completions help" -f -a "grep" -d 'Search file contents with a regular expression'
complete -c tinytool -n "__fish_tinytool_using_subcommand help; and not __fish_seen_subcommand_from read write edit apply_patch bash grep glob question webfetch task todowrite report_findings monitor notepad plan_enter plan_exit exit skill checkpoint diagnostics websearch exec policy state sandbox lsp checkpoints undo tools mcp completions help" -f -a "glob" -d 'Find files by name with a glob pattern'
complete -c tinytool -n "__fish_tinytool_using_subcommand help; and not __fish_seen_subcommand_from read write edit apply_patch bash grep glob question webfetch task todowrite report_findings monitor notepad plan_enter plan_exit exit skill checkpoint diagnostics websearch exec policy state sandbox lsp checkpoints undo tools mcp completions help" -f -a "question" -d 'Ask the user a question'
complete -c tinytool -n "__fish_tinytool_using_subcommand help; and not __fish_seen_subcommand_from read write edit apply_patch bash grep glob question webfetch task todowrite report_findings monitor notepad plan_enter plan_exit exit skill checkpoint diagnostics websearch exec policy state sandbox lsp checkpoints undo tools mcp completions help" -f -a "webfetch" -d 'Fetch a URL as text, Markdown or HTML'
complete -c tinytool -n "__fish_tinytool_using_subcommand help; and not __fish_seen_subcommand_from read write edit apply_patch bash grep glob question webfetch task todowrite report_findings monitor notepad plan_enter plan_exit exit skill checkpoint diagnostics websearch exec policy state sandbox lsp checkpoints undo tools mcp completions help" -f -a "task" -d 'Run a subagent, in the foreground or as a background job'
complete -c tinytool -n "__fish_tinytool_using_subcommand help; and not __fish_seen_subcommand_from read write edit apply_patch bash grep glob question webfetch task todowrite report_findings monitor notepad plan_enter plan_exit exit skill checkpoint diagnostics websearch exec policy state sandbox lsp checkpoints undo tools mcp completions help" -f -a "todowrite" -d 'Replace the session\'s todo list'
complete -c tinytool -n "__fish_tinytool_using_subcommand help; and not __fish_seen_subcommand_from read write edit apply_patch bash grep glob question webfetch task todowrite report_findings monitor notepad plan_enter plan_exit exit skill checkpoint diagnostics websearch exec policy state sandbox lsp checkpoints undo tools mcp completions help" -f -a "report_findings" -d 'Record review findings for the session'
complete -c tinytool -n "__fish_tinytool_using_subcommand help; and not __fish_seen_subcommand_from read write edit apply_patch bash grep glob question webfetch task todowrite report_findings monitor notepad plan_enter plan_exit exit skill checkpoint diagnostics websearch exec policy state sandbox lsp checkpoints undo tools mcp completions help" -f -a "monitor" -d 'Run a long-lived command in the background and read its output later'
complete -c tinytool -n "__fish_tinytool_using_subcommand help; and not __fish_seen_subcommand_from read write edit apply_patch bash grep glob question webfetch task todowrite report_findings monitor notepad plan_enter plan_exit exit skill checkpoint diagnostics websearch exec policy state sandbox lsp checkpoints undo tools mcp completions help" -f -a "notepad" -d 'Keep notes for the session'
complete -c tinytool -n "__fish_tinytool_using_subcommand help; and not __fish_seen_subcommand_from read write edit apply_patch bash grep glob question webfetch task todowrite report_findings monitor notepad plan_enter plan_exit exit skill checkpoint diagnostics websearch exec policy state sandbox lsp checkpoints undo tools mcp completions help" -f -a "plan_enter" -d 'Switch the session into plan mode'
complete -c tinytool -n "__fish_tinytool_using_subcommand help; and not __fish_seen_subcommand_from read write edit apply_patch bash grep glob question webfetch task todowrite report_findings monitor notepad plan_enter plan_exit exit skill checkpoint diagnostics websearch exec policy state sandbox lsp checkpoints undo tools mcp completions help" -f -a "plan_exit" -d 'Switch the session back to build mode'
complete -c tinytool -n "__fish_tinytool_using_subcommand help; and not __fish_seen_subcommand_from read write edit apply_patch bash grep glob question webfetch task todowrite report_findings monitor notepad plan_enter plan_exit exit skill checkpoint diagnostics websearch exec policy state sandbox lsp checkpoints undo tools mcp completions help" -f -a "exit" -d 'End the session\'s tool loop'
complete -c tinytool -n "__fish_tinytool_using_subcommand help; and not __fish_seen_subcommand_from read write edit apply_patch bash grep glob question webfetch task todowrite report_findings monitor notepad plan_enter plan_exit exit skill checkpoint diagnostics websearch exec policy state sandbox lsp checkpoints undo tools mcp completions help" -f -a "skill" -d 'Run a skill by name'
complete -c tinytool -n "__fish_tinytool_using_subcommand help; and not __fish_seen_subcommand_from read write edit apply_patch bash grep glob question webfetch task todowrite report_findings monitor notepad plan_enter plan_exit exit skill checkpoint diagnostics websearch exec policy state sandbox lsp checkpoints undo tools mcp completions help" -f -a "checkpoint" -d 'List the checkpoints taken before calls, show one, or undo one'
complete -c tinytool -n "__fish_tinytool_using_subcommand help; and not __fish_seen_subcommand_from read write edit apply_patch bash grep glob question webfetch task todowrite report_findings monitor notepad plan_enter plan_exit exit skill checkpoint diagnostics websearch exec policy state sandbox lsp checkpoints undo tools mcp completions help" -f -a "diagnostics" -d 'The language servers\' errors for a file, a folder or the project'
complete -c tinytool -n "__fish_tinytool_using_subcommand help; and not __fish_seen_subcommand_from read write edit apply_patch bash grep glob question webfetch task todowrite report_findings monitor notepad plan_enter plan_exit exit skill checkpoint diagnostics websearch exec policy state sandbox lsp checkpoints undo tools mcp completions help" -f -a "websearch" -d 'Search the web (Exa API)'
complete -c tinytool -n "__fish_tinytool_using_subcommand help; and not __fish_seen_subcommand_from read write edit apply_patch bash grep glob question webfetch task todowrite report_findings monitor notepad plan_enter plan_exit exit skill checkpoint diagnostics websearch exec policy state sandbox lsp checkpoints undo tools mcp completions help" -f -a "exec" -d 'Run tool calls given as JSON on standard input'
complete -c tinytool -n "__fish_tinytool_using_subcommand help; and not __fish_seen_subcommand_from read write edit apply_patch bash grep glob question webfetch task todowrite report_findings monitor notepad plan_enter plan_exit exit skill checkpoint diagnostics websearch exec policy state sandbox lsp checkpoints undo tools mcp completions help" -f -a "policy" -d 'Explain the policy\'s decisions'
complete -c tinytool -n "__fish_tinytool_using_subcommand help; and not __fish_seen_subcommand_from read write edit apply_patch bash grep glob question webfetch task todowrite report_findings monitor notepad plan_enter plan_exit exit skill checkpoint diagnostics websearch exec policy state sandbox lsp checkpoints undo tools mcp completions help" -f -a "state" -d 'Print the session\'s stored state as JSON'
complete -c tinytool -n "__fish_tinytool_using_subcommand help; and not __fish_seen_subcommand_from read write edit apply_patch bash grep glob question webfetch task todowrite report_findings monitor notepad plan_enter plan_exit exit skill checkpoint diagnostics websearch exec policy state sandbox lsp checkpoints undo tools mcp completions help" -f -a "sandbox" -d 'Print which sandbox layers this machine supports, and why one is missing'
complete -c tinytool -n "__fish_tinytool_using_subcommand help; and not __fish_seen_subcommand_from read write edit apply_patch bash grep glob question webfetch task todowrite report_findings monitor notepad plan_enter plan_exit exit skill checkpoint diagnostics websearch exec policy state sandbox lsp checkpoints undo tools mcp completions help" -f -a "lsp" -d 'Show or stop the language servers behind diagnostics'
complete -c tinytool -n "__fish_tinytool_using_subcommand help; and not __fish_seen_subcommand_from read write edit apply_patch bash grep glob question webfetch task todowrite report_findings monitor notepad plan_enter plan_exit exit skill checkpoint diagnostics websearch exec policy state sandbox lsp checkpoints undo tools mcp completions help" -f -a "checkpoints" -d 'List the checkpoints taken before calls, newest first'
complete -c tinytool -n "__fish_tinytool_using_subcommand help; and not __fish_seen_subcommand_from read write edit apply_patch bash grep glob question webfetch task todowrite report_findings monitor notepad plan_enter plan_exit exit skill checkpoint diagnostics websearch exec policy state sandbox lsp checkpoints undo tools mcp completions help" -f -a "undo" -d 'Revert the changes of a checkpoint'
complete -c tinytool -n "__fish_tinytool_using_subcommand help; and not __fish_seen_subcommand_from read write edit apply_patch bash grep glob question webfetch task todowrite report_findings monitor notepad plan_enter plan_exit exit skill checkpoint diagnostics websearch exec policy state sandbox lsp checkpoints undo tools mcp completions help" -f -a "tools" -d 'Print the tool definitions as one JSON array'
complete -c tinytool -n "__fish_tinytool_using_subcommand help; and not __fish_seen_subcommand_from read write edit apply_patch bash grep glob question webfetch task todowrite report_findings monitor notepad plan_enter plan_exit exit skill checkpoint diagnostics websearch exec policy state sandbox lsp checkpoints undo tools mcp completions help" -f -a "mcp" -d 'Serve every tool over the Model Context Protocol (stdio, or HTTP with --listen)'
complete -c tinytool -n "__fish_tinytool_using_subcommand help; and not __fish_seen_subcommand_from read write edit apply_patch bash grep glob question webfetch task todowrite report_findings monitor notepad plan_enter plan_exit exit skill checkpoint diagnostics websearch exec policy state sandbox lsp checkpoints undo tools mcp completions help" -f -a "completions" -d 'Print a shell completion script'
complete -c tinytool -n "__fish_tinytool_using_subcommand help; and not __fish_seen_subcommand_from read write edit apply_patch bash grep glob question webfetch task todowrite report_findings monitor notepad plan_enter plan_exit exit skill checkpoint diagnostics websearch exec policy state sandbox lsp checkpoints undo tools mcp completions help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c tinytool -n "__fish_tinytool_using_subcommand help; and __fish_seen_subcommand_from policy" -f -a "check" -d 'Check policy files for rules that would not do what they say'
complete -c tinytool -n "__fish_tinytool_using_subcommand help; and __fish_seen_subcommand_from policy" -f -a "explain" -d 'Show the decision on a tool call without running it'
complete -c tinytool -n "__fish_tinytool_using_subcommand help; and __fish_seen_subcommand_from lsp" -f -a "status" -d 'Print the servers of the project, per language'
complete -c tinytool -n "__fish_tinytool_using_subcommand help; and __fish_seen_subcommand_from lsp" -f -a "stop" -d 'Stop every language server of the project'
complete -c tinytool -n "__fish_tinytool_using_subcommand help; and __fish_seen_subcommand_from checkpoints" -f -a "show" -d 'Print the unified diff of one checkpoint'
