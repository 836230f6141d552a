# Print an optspec for argparse to handle cmd's options that are independent of any subcommand.
function __fish_tinytool_global_optspecs
    string join \n dir= session= events= text h/help V/version
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

complete -c tinytool -n "__fish_tinytool_needs_command" -l dir -d 'Working directory: relative paths resolve here [default: current directory]' -r
complete -c tinytool -n "__fish_tinytool_needs_command" -l session -d 'Session id: todos, agent mode, jobs and approvals are per session [default: default]' -r
complete -c tinytool -n "__fish_tinytool_needs_command" -l events -d 'Append bus events to FILE as JSON lines (`-` = standard error)' -r
complete -c tinytool -n "__fish_tinytool_needs_command" -l text -d 'Print only the output text; the exit status carries the outcome'
complete -c tinytool -n "__fish_tinytool_needs_command" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c tinytool -n "__fish_tinytool_needs_command" -s V -l version -d 'Print version'
complete -c tinytool -n "__fish_tinytool_needs_command" -f -a "read" -d 'Read a file\'s lines, numbered'
complete -c tinytool -n "__fish_tinytool_needs_command" -f -a "exit" -d 'End the session\'s tool loop'
complete -c tinytool -n "__fish_tinytool_needs_command" -f -a "exec" -d 'Run tool calls given as JSON on standard input'
complete -c tinytool -n "__fish_tinytool_needs_command" -f -a "tools" -d 'Print the tool definitions as one JSON array'
complete -c tinytool -n "__fish_tinytool_needs_command" -f -a "completions" -d 'Print a shell completion script'
complete -c tinytool -n "__fish_tinytool_needs_command" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c tinytool -n "__fish_tinytool_using_subcommand read" -l file-path -d 'Path of the file to read: absolute, or relative to the working directory. [required]' -r
complete -c tinytool -n "__fish_tinytool_using_subcommand read" -l offset -d '0-based index of the first line to show (default 0).' -r
complete -c tinytool -n "__fish_tinytool_using_subcommand read" -l limit -d 'Maximum number of lines to show (default 2000).' -r
complete -c tinytool -n "__fish_tinytool_using_subcommand read" -l dir -d 'Working directory: relative paths resolve here [default: current directory]' -r
complete -c tinytool -n "__fish_tinytool_using_subcommand read" -l session -d 'Session id: todos, agent mode, jobs and approvals are per session [default: default]' -r
complete -c tinytool -n "__fish_tinytool_using_subcommand read" -l events -d 'Append bus events to FILE as JSON lines (`-` = standard error)' -r
complete -c tinytool -n "__fish_tinytool_using_subcommand read" -l stdin -d 'Also read a JSON object of parameters from standard input when flags are given'
complete -c tinytool -n "__fish_tinytool_using_subcommand read" -l text -d 'Print only the output text; the exit status carries the outcome'
complete -c tinytool -n "__fish_tinytool_using_subcommand read" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c tinytool -n "__fish_tinytool_using_subcommand exit" -l reason -d 'Why the work ends (default "task complete").' -r
complete -c tinytool -n "__fish_tinytool_using_subcommand exit" -l dir -d 'Working directory: relative paths resolve here [default: current directory]' -r
complete -c tinytool -n "__fish_tinytool_using_subcommand exit" -l session -d 'Session id: todos, agent mode, jobs and approvals are per session [default: default]' -r
complete -c tinytool -n "__fish_tinytool_using_subcommand exit" -l events -d 'Append bus events to FILE as JSON lines (`-` = standard error)' -r
complete -c tinytool -n "__fish_tinytool_using_subcommand exit" -l stdin -d 'Also read a JSON object of parameters from standard input when flags are given'
complete -c tinytool -n "__fish_tinytool_using_subcommand exit" -l text -d 'Print only the output text; the exit status carries the outcome'
complete -c tinytool -n "__fish_tinytool_using_subcommand exit" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c tinytool -n "__fish_tinytool_using_subcommand exec" -l dir -d 'Working directory: relative paths resolve here [default: current directory]' -r
complete -c tinytool -n "__fish_tinytool_using_subcommand exec" -l session -d 'Session id: todos, agent mode, jobs and approvals are per session [default: default]' -r
complete -c tinytool -n "__fish_tinytool_using_subcommand exec" -l events -d 'Append bus events to FILE as JSON lines (`-` = standard error)' -r
complete -c tinytool -n "__fish_tinytool_using_subcommand exec" -l jsonl -d 'Read one call per line until end of input (or the exit tool), answering each'
complete -c tinytool -n "__fish_tinytool_using_subcommand exec" -l text -d 'Print only the output text; the exit status carries the outcome'
complete -c tinytool -n "__fish_tinytool_using_subcommand exec" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c tinytool -n "__fish_tinytool_using_subcommand tools" -l format -d 'Shape of each definition' -r -f -a "openai\t''
anthropic\t''
gemini\t''
mcp\t''
json\t''"
complete -c tinytool -n "__fish_tinytool_using_subcommand tools" -l dir -d 'Working directory: relative paths resolve here [default: current directory]' -r
complete -c tinytool -n "__fish_tinytool_using_subcommand tools" -l session -d 'Session id: todos, agent mode, jobs and approvals are per session [default: default]' -r
complete -c tinytool -n "__fish_tinytool_using_subcommand tools" -l events -d 'Append bus events to FILE as JSON lines (`-` = standard error)' -r
complete -c tinytool -n "__fish_tinytool_using_subcommand tools" -l text -d 'Print only the output text; the exit status carries the outcome'
complete -c tinytool -n "__fish_tinytool_using_subcommand tools" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c tinytool -n "__fish_tinytool_using_subcommand completions" -l dir -d 'Working directory: relative paths resolve here [default: current directory]' -r
complete -c tinytool -n "__fish_tinytool_using_subcommand completions" -l session -d 'Session id: todos, agent mode, jobs and approvals are per session [default: default]' -r
complete -c tinytool -n "__fish_tinytool_using_subcommand completions" -l events -d 'Append bus events to FILE as JSON lines (`-` = standard error)' -r
complete -c tinytool -n "__fish_tinytool_using_subcommand completions" -l text -d 'Print only the output text; the exit status carries the outcome'
complete -c tinytool -n "__fish_tinytool_using_subcommand completions" -s h -l help -d 'Print help'
complete -c tinytool -n "__fish_tinytool_using_subcommand help; and not __fish_seen_subcommand_from read exit exec tools completions help" -f -a "read" -d 'Read a file\'s lines, numbered'
complete -c tinytool -n "__fish_tinytool_using_subcommand help; and not __fish_seen_subcommand_from read exit exec tools completions help" -f -a "exit" -d 'End the session\'s tool loop'
complete -c tinytool -n "__fish_tinytool_using_subcommand help; and not __fish_seen_subcommand_from read exit exec tools completions help" -f -a "exec" -d 'Run tool calls given as JSON on standard input'
complete -c tinytool -n "__fish_tinytool_using_subcommand help; and not __fish_seen_subcommand_from read exit exec tools completions help" -f -a "tools" -d 'Print the tool definitions as one JSON array'
complete -c tinytool -n "__fish_tinytool_using_subcommand help; and not __fish_seen_subcommand_from read exit exec tools completions help" -f -a "completions" -d 'Print a shell completion script'
complete -c tinytool -n "__fish_tinytool_using_subcommand help; and not __fish_seen_subcommand_from read exit exec tools completions help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
