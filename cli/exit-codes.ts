/**
 * fleetscope's exit codes, listed once: the README's table is generated from this list
 * (test/readme/exit-codes.test.ts holds the two equal), cli/main.ts maps errors onto it, and
 * test/cli/exit-codes.sim.test.ts runs every command's error paths against it.
 */
export const EXIT = { done: 0, refused: 1, usage: 2 } as const;

export type ExitKind = keyof typeof EXIT;

export interface ExitCode {
  code: number;
  kind: ExitKind;
  meaning: string;
  /** What falls under it, as the README lists it. */
  examples: string[];
  /** How the error reads on stderr. */
  says?: string;
}

export const EXIT_CODES: readonly ExitCode[] = [
  { code: EXIT.done, kind: 'done', meaning: 'done', examples: [] },
  {
    code: EXIT.refused,
    kind: 'refused',
    meaning: 'the command ran and the world said no',
    says: 'The reason is on one line of stderr, `fleetscope <command>: ...`, with no usage hint',
    examples: [
      'a name that does not exist (a cluster, node, DaemonSet, feature or rollout)',
      'a cluster unreachable',
      'a file that cannot be read or written',
      'a refused change or a conflict (a name taken, a rollout of the feature already running)',
      'a cycle that failed, or a run that reached no cluster (`run`)',
      'a cluster not in sync, or writes pending under `--dry-run` (`claims check`)',
      'an upgrade blocked by a feature (`features check-upgrade`)',
    ],
  },
  {
    code: EXIT.usage,
    kind: 'usage',
    meaning: 'usage error: the command line itself is wrong',
    says: 'The one wrong flag is named, with `run "fleetscope <command> --help" for usage`',
    examples: [
      'an unknown command, subcommand or flag (with "did you mean" when one is close)',
      'a missing flag, or a flag without its value',
      'a value that does not parse, such as `--cpu lots`, `--cpu -2`, `-o xml`, a name or claim value that is not valid',
    ],
  },
];

export const EXIT_RULE =
  'The rule between them: if the same command line could succeed against another fleet, a failure is `1`.';

/** The README's table, as Markdown lines. */
export function exitCodesMarkdown(): string[] {
  const row = (e: ExitCode) =>
    e.examples.length ? `${e.meaning}: ${e.examples.join('; ')}. ${e.says ?? ''}`.trim() : e.meaning;
  return [
    '| Code | Meaning |',
    '|---|---|',
    ...EXIT_CODES.map((e) => `| \`${e.code}\` | ${row(e)} |`),
    '',
    EXIT_RULE,
  ];
}
