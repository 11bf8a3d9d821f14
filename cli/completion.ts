/**
 * `meshctl completion bash|zsh`: prints a shell script that completes meshctl's commands, flags, resource
 * types and object names, as `kubectl completion` does. The script asks `meshctl __complete` (complete.ts)
 * for the candidates at every Tab, so it never goes stale when commands, kinds or objects change.
 */
import type { Command, CommandContext } from './command.ts';
import { EXIT_OK, UsageError } from './errors.ts';

// Both scripts call the meshctl the user typed (a leading ~ expanded), with the words up to the cursor.
// `__complete` prints one candidate a line; a `:files` line asks for file-name completion instead.
const BASH = `# meshctl completion for bash. Load it with: source <(meshctl completion bash)
_meshctl() {
  local cur=\${COMP_WORDS[COMP_CWORD]} prog=\${COMP_WORDS[0]/#\\~/$HOME} line files=
  local -a candidates=()
  COMPREPLY=()
  while IFS= read -r line; do
    if [[ $line == :files ]]; then files=1; elif [[ -n $line ]]; then candidates+=("$line"); fi
  done < <("$prog" __complete -- "\${COMP_WORDS[@]:1:COMP_CWORD}" 2>/dev/null)
  if [[ -n $files ]]; then
    compopt -o filenames 2>/dev/null
    mapfile -t COMPREPLY < <(compgen -f -- "$cur")
  else
    COMPREPLY=("\${candidates[@]}")
  fi
}
complete -F _meshctl meshctl
`;

const ZSH = `# meshctl completion for zsh. Load it with: source <(meshctl completion zsh) (after compinit)
_meshctl() {
  local line files=
  local -a candidates
  for line in "\${(@f)$(\${words[1]/#\\~/$HOME} __complete -- "\${(@)words[2,CURRENT]}" 2>/dev/null)}"; do
    if [[ $line == :files ]]; then files=1; elif [[ -n $line ]]; then candidates+=("$line"); fi
  done
  if [[ -n $files ]]; then
    _files
  else
    compadd -a candidates
  fi
}
compdef _meshctl meshctl
`;

/** The scripts by shell name. */
export const SCRIPTS: Record<string, string> = { bash: BASH, zsh: ZSH };

/** The `completion` command. */
export const command: Command = {
  usage: 'completion bash|zsh',
  description:
    'Print a shell script that completes meshctl commands, flags, resource types and object names (the names ' +
    'are asked of the control plane at each Tab). For zsh, compinit must have run first (autoload -Uz compinit && compinit).',
  examples: [
    'source <(meshctl completion bash)                  # in this shell; add the line to ~/.bashrc to keep it',
    'source <(meshctl completion zsh)                   # likewise, in ~/.zshrc after compinit',
  ],
  flags: [],
  run,
};

async function run(ctx: CommandContext): Promise<number> {
  const [shell, ...extra] = ctx.args.positionals;
  if (shell === undefined) throw new UsageError('shell not specified: bash or zsh');
  if (extra.length) throw new UsageError(`too many arguments: expected only the shell, got "${extra.join(' ')}"`);
  if (!Object.hasOwn(SCRIPTS, shell)) throw new UsageError(`unsupported shell type "${shell}": bash or zsh`);
  ctx.out(SCRIPTS[shell]);
  return EXIT_OK;
}
