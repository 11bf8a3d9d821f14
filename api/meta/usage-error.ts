/**
 * A mistake in a command line (unknown flag, missing argument, a value of the wrong form), for all three
 * programs: `meshctl`, `mesh-agent` and `mesh-control-plane` print its message and usage help and exit with
 * `EXIT_USAGE` (2), as cli/README.md's exit codes say. Recognise it by `name === 'UsageError'`, not
 * `instanceof`: a separately built bundle (`meshctl init`) has its own copy of this class (cli/errors.ts).
 */

/** The exit code of a usage error. */
export const EXIT_USAGE = 2;

/** A bad command line: the program prints the message with a hint to `--help` and exits `EXIT_USAGE`. */
export class UsageError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'UsageError';
  }
}
