// Benchmark 4's floor: the least work a Node program can do to store every pull request of a
// clone's first-parent line with its diff in SQLite, run by bare `node` (no perfmine code, no
// TypeScript loader). One `git log -p` process with collect's diff options; each PR commit (the
// merge and squash subjects collect reads) is parsed into a small record, hashed with SHA-256 and
// inserted, 500 per transaction, into a WAL-mode file with `synchronous = NORMAL` (as the store).
// It skips what collect does beside this: the resumable ledger, the branches' start dates, the asv
// configs, the config, the logger and the CLI. It prints `{"records": N}`.
//
//   node test/bench/git-collect-floor.mjs DB REPO SINCE UNTIL [REF]   (REF: HEAD)
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { createRequire } from 'node:module';

const Database = createRequire(import.meta.url)('better-sqlite3');
const [dbPath, repo, since, until, ref = 'HEAD'] = process.argv.slice(2);
if (!until) {
  console.error('usage: node test/bench/git-collect-floor.mjs DB REPO SINCE UNTIL [REF]');
  process.exit(2);
}

const PR_SUBJECT = /^Merge pull request #[1-9]\d{0,9} from \S+|^.*\S\s+\(#[1-9]\d{0,9}\)$/;
const db = new Database(dbPath);
db.pragma('journal_mode = WAL');
db.pragma('synchronous = NORMAL');
db.exec('CREATE TABLE IF NOT EXISTS pull_requests (sha TEXT PRIMARY KEY, record TEXT NOT NULL, diff TEXT NOT NULL, hash TEXT NOT NULL)');
const insert = db.prepare('INSERT OR REPLACE INTO pull_requests VALUES (?, ?, ?, ?)');
const insertAll = db.transaction((rows) => {
  for (const row of rows) insert.run(row);
});

let rows = [];
let records = 0;
function take(text) {
  const end = text.indexOf('\0');
  const [sha, parents, authored, committed, message] = text.slice(0, end).split('\x1f');
  const subject = message.split('\n', 1)[0].trim();
  if (!PR_SUBJECT.test(subject)) return;
  const diff = text.slice(end + 1);
  const files = [];
  let additions = 0;
  let deletions = 0;
  for (const line of diff.split('\n')) {
    if (line.startsWith('diff --git ')) files.push(line.slice(11));
    else if (line[0] === '+' && !line.startsWith('+++ ')) additions += 1;
    else if (line[0] === '-' && !line.startsWith('--- ')) deletions += 1;
  }
  const record = JSON.stringify({
    sha,
    parents: parents.split(' '),
    createdAt: new Date(Number(authored) * 1000).toISOString(),
    mergedAt: new Date(Number(committed) * 1000).toISOString(),
    title: subject,
    files,
    additions,
    deletions,
  });
  rows.push([sha, record, diff, createHash('sha256').update(record).update(diff).digest('hex')]);
  records += 1;
  if (rows.length >= 500) {
    insertAll(rows);
    rows = [];
  }
}

const args = ['-C', repo, 'log', '--first-parent', `--since=${since}`, `--until=${until}`, '--format=%x00%x00%H%x1f%P%x1f%at%x1f%ct%x1f%B%x00'];
args.push('-p', '--diff-merges=first-parent', '--no-color', '--no-ext-diff', '--no-textconv', '--binary', '--full-index', '-M', ref);
const git = spawn('git', args, { stdio: ['ignore', 'pipe', 'inherit'] });
git.stdout.setEncoding('utf8');
let pending = '';
git.stdout.on('data', (chunk) => {
  pending += chunk;
  let at = pending.indexOf('\0\0', 2);
  while (at > 0) {
    take(pending.slice(2, at));
    pending = pending.slice(at);
    at = pending.indexOf('\0\0', 2);
  }
});
git.on('close', (code) => {
  if (code !== 0) {
    console.error(`git log exited ${code}`);
    process.exit(1);
  }
  if (pending.length > 2) take(pending.slice(2));
  if (rows.length > 0) insertAll(rows);
  db.close();
  process.stdout.write(`${JSON.stringify({ records })}\n`);
});
