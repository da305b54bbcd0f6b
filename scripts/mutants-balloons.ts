/**
 * `npm run mutants:balloons`: each mutation below breaks one of the balloons' safety rules in the source;
 * each must make a test fail. The mutations are applied one at a time to a temporary copy of the
 * working tree (node_modules linked), never to the tree itself, and the balloon suites run there. Prints
 * each mutation and the tests that killed it; exits non-zero when one survives (or no longer applies:
 * a mutation that matches nothing would prove nothing). Not part of `npm test`: figures in docs/balloons.md.
 */
import { spawnSync } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';

interface Mutation {
  name: string;
  file: string;
  from: string;
  to: string;
}

const MUTATIONS: Mutation[] = [
  {
    name: 'balloons run in a system-node-critical class',
    file: 'shared/balloons/manifests.ts',
    from: 'priorityClassName: PRIORITY_CLASS,',
    to: "priorityClassName: 'system-node-critical',",
  },
  {
    name: 'the PriorityClass preempts (preemptionPolicy: PreemptLowerPriority)',
    file: 'shared/balloons/manifests.ts',
    from: "preemptionPolicy: 'Never',",
    to: "preemptionPolicy: 'PreemptLowerPriority',",
  },
  {
    name: 'sidecars ignored in what a pod occupies',
    file: 'shared/kernel/pod-requests.ts',
    from: '      sum = add(sum, r);\n',
    to: '',
  },
  {
    name: 'the revert of a held-back inflate skipped',
    file: 'shared/balloons/resizing.ts',
    from: 'if (!held) return undefined;',
    to: 'if (held || !held) return undefined;',
  },
  {
    name: 'observedGeneration ignored (stale resize conditions believed)',
    file: 'shared/resize/status.ts',
    from: '.filter((c) => current(pod, c))',
    to: '.filter(() => true)',
  },
  {
    name: 'the balloon label trusted in any namespace',
    file: 'shared/balloons/read.ts',
    from: '  v.namespace === BALLOON_NAMESPACE &&\n',
    to: '',
  },
  {
    name: 'the balloon label trusted whoever owns the pod',
    file: 'shared/balloons/read.ts',
    from: "  v.owner?.kind === 'DaemonSet' &&\n  v.owner.name === BALLOON_NAME;",
    to: '  true;',
  },
  {
    name: 'free capacity ignored (inflate straight to the target)',
    file: 'shared/balloons/sizing.ts',
    from: 'return Math.min(target[r], Math.max(load.balloon[r], free[r]));',
    to: 'return target[r];',
  },
  {
    name: 'the KEP-5836 key never written',
    file: 'shared/balloons/opt-out-step.ts',
    from: 'new Set(decisions.filter((d) => d.desired).map((d) => d.node))',
    to: 'new Set<string>()',
  },
  {
    name: 'issue 28: a balloon trusted whatever its pod is (priority, preemptionPolicy, containers)',
    file: 'shared/balloons/integrity.ts',
    from: '  return out;\n}',
    to: '  return [];\n}',
  },
  {
    name: 'issue 28: a drifted pod template never repaired',
    file: 'shared/balloons/incluster.ts',
    from: 'const drift = templateDrift(current.spec?.template?.spec, this.image);',
    to: 'const drift: string[] = [];',
  },
  {
    name: 'issue 28: a PriorityClass replaced at another value trusted',
    file: 'shared/balloons/incluster.ts',
    from: 'if (pc.value !== BALLOON_PRIORITY) drift.push(',
    to: 'if (false) drift.push(',
  },
  {
    name: 'issue 28: a LimitRange or ResourceQuota in kube-system never reported',
    file: 'shared/balloons/cycle.ts',
    from: '  l.errors.push(...(await ctx.objects.namespaceLimits()));',
    to: '',
  },
  {
    name: 'issue 28: deflates held back by the back-off of a refused inflate',
    file: 'shared/balloons/resizing.ts',
    from: "return same && record?.state !== 'error' ? record : undefined;",
    to: 'return record;',
  },
  {
    name: 'issue 28: pending pods counted wherever their required node affinity points',
    file: 'shared/balloons/pending.ts',
    from: '  if (pod.terms && !pod.terms.some((t) => termMatches(t, node))) return false;',
    to: '',
  },
  {
    name: "issue 28: gated pods and other schedulers' pods counted as demand",
    file: 'shared/balloons/read.ts',
    from: "!p.waiting.gated && p.waiting.schedulerName === 'default-scheduler';",
    to: 'true;',
  },
  {
    name: 'issue 28: usage never bounds a shrink',
    file: 'shared/balloons/decide.ts',
    from: 'if (!d || !used) return d;',
    to: 'return d;',
  },
  {
    name: 'issue 28: an explicit size applied to a new node of the same name',
    file: 'shared/balloons/requests.ts',
    from: 'if (r.nodeUid && node.uid && r.nodeUid !== node.uid)',
    to: 'if (false)',
  },
  {
    name: 'issue 28: a shared host priced once per kubelet',
    file: 'shared/balloons/prices.ts',
    from: 'if (!price || !kubelets || kubelets <= 1) return price;',
    to: 'return price;',
  },
  {
    name: 'issue 28: pods of a balloon-named DaemonSet fleetscope did not create taken as balloons',
    file: 'shared/balloons/cycle.ts',
    from: 'if (p.balloon && p.ownerUid !== owner.uid) {',
    to: 'if (false) {',
  },
];

const TESTS = [
  'test/balloons/issue28.test.ts',
  'test/balloons/issue28.sim.test.ts',
  'test/balloons/defects.sim.test.ts',
  'test/balloons/balloons.sim.test.ts',
  'test/balloons/domain.test.ts',
  'test/balloons/resize-preemption.sim.test.ts',
];

const ROOT = resolve(import.meta.dirname, '..');

/** The working tree's files (tracked and new, not ignored) in a temporary directory. */
function copyTree(): string {
  const dir = mkdtempSync(join(tmpdir(), 'fleetscope-mutants-'));
  const listed = spawnSync('git', ['ls-files', '--cached', '--others', '--exclude-standard', '-z'], {
    cwd: ROOT,
    encoding: 'utf8',
  });
  if (listed.status !== 0) throw new Error(`git ls-files failed: ${listed.stderr}`);
  for (const f of listed.stdout.split('\0').filter(Boolean)) {
    mkdirSync(dirname(join(dir, f)), { recursive: true });
    try {
      cpSync(join(ROOT, f), join(dir, f));
    } catch {
      // a file deleted in the working tree but still tracked
    }
  }
  symlinkSync(join(ROOT, 'node_modules'), join(dir, 'node_modules'));
  return dir;
}

/** Runs the balloon suites in the copy; the names of the tests that failed. */
function failingTests(dir: string): string[] {
  const out = join(dir, 'mutant-report.json');
  spawnSync('npx', ['vitest', 'run', ...TESTS, '--reporter=json', `--outputFile=${out}`], {
    cwd: dir,
    encoding: 'utf8',
    stdio: ['ignore', 'ignore', 'ignore'],
  });
  const report = JSON.parse(readFileSync(out, 'utf8')) as {
    testResults: { name: string; assertionResults: { status: string; fullName: string }[] }[];
  };
  rmSync(out);
  return report.testResults.flatMap((f) =>
    f.assertionResults
      .filter((a) => a.status === 'failed')
      .map((a) => `${f.name.slice(dir.length + 1)} > ${a.fullName}`),
  );
}

/** `-- --only TEXT`: only the mutations whose name contains TEXT (one mutant at a time). */
function selected(): Mutation[] {
  const at = process.argv.indexOf('--only');
  const only = at >= 0 ? process.argv[at + 1] : undefined;
  return only ? MUTATIONS.filter((m) => m.name.includes(only)) : MUTATIONS;
}

function main(): number {
  if (selected().length === 0) {
    console.error('--only matches no mutation');
    return 2;
  }
  const dir = copyTree();
  let survivors = 0;
  try {
    const clean = failingTests(dir);
    if (clean.length) {
      console.error(`the suites fail without any mutation:\n  ${clean.join('\n  ')}`);
      return 2;
    }
    for (const m of selected()) {
      const path = join(dir, m.file);
      const original = readFileSync(path, 'utf8');
      const hits = original.split(m.from).length - 1;
      if (hits !== 1) {
        console.log(`NOT APPLIED  ${m.name}: ${m.file} holds the text ${hits} times (expected once)`);
        survivors++;
        continue;
      }
      writeFileSync(path, original.replace(m.from, m.to));
      try {
        const killers = failingTests(dir);
        if (killers.length === 0) {
          survivors++;
          console.log(`SURVIVED     ${m.name} (${m.file})`);
        } else
          console.log(
            `killed       ${m.name} (${m.file}) by ${killers.length} test(s):\n               ${killers.slice(0, 3).join('\n               ')}`,
          );
      } finally {
        writeFileSync(path, original);
      }
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  const ran = selected().length;
  console.log(`${ran - survivors} of ${ran} mutations killed`);
  return survivors === 0 ? 0 : 1;
}

process.exitCode = main();
