// The everyday-lines corpus: lines a developer (or an agent) types every day,
// by family, each with the scene it runs in. scripts/everyday.mjs runs every
// line twice from the same scene, unfenced (the control) and the way the
// plugin does (decide with the default rules, Allow once where a card
// appears, `dsh-allow run` under the profile the plugin would hand it), and
// counts what works with no card, what works after a card, and what fails.
//
// An entry: `id`, `family`, `needs` (programs that must be on the run's
// PATH, else a loud SKIP), `files` (workspace-relative path → text), `scene`
// (bash lines run unfenced in the workspace first: the project as the line
// finds it), `line` (the line measured, run in `cwd`, default the workspace),
// `check` (bash, run unfenced afterwards in the workspace: exit 0 = the line
// did its work), `ignore` (a RegExp of workspace paths whose presence may
// differ from the control's: names made from times or process ids).
//
// The scene runs as the user the line runs as; `../` from the workspace is
// the entry's own folder (a sibling repository, a worktree's place).

const GITCONFIG = '[user]\n\tname = Every Day\n\temail = everyday@example.invalid\n[init]\n\tdefaultBranch = main\n[protocol "file"]\n\tallow = always\n'
const HOME_FILES = { '../home/.gitconfig': GITCONFIG }

// --- SQLite ------------------------------------------------------------------
const DB = 'sqlite3 app.db "create table t(x); insert into t values (1)"'
const count = (n, db = 'app.db') => `test "$(sqlite3 ${db} 'select count(*) from t')" = ${n}`
/** A WAL database whose writer died: -wal and -shm stay behind. */
const WAL_LEFT = `python3 -c "import sqlite3, os; c = sqlite3.connect('app.db'); c.execute('pragma journal_mode=wal'); c.execute('create table if not exists t(x)'); c.execute('insert into t values (1)'); c.commit(); os._exit(0)"`
/** A rollback journal left hot by a writer that died inside its transaction. */
const HOT_JOURNAL = `python3 -c "import sqlite3, os; c = sqlite3.connect('app.db', isolation_level=None); c.execute('begin'); c.execute('insert into t values (99)'); c.execute('pragma cache_size=1'); [c.execute('insert into t values (?)', (i,)) for i in range(2000)]; os._exit(0)"`
const NO_SIDECARS = 'test ! -e app.db-journal && test ! -e app.db-wal'

const DJANGO = 'django-admin startproject mysite . && printf "\\nSTATIC_ROOT = BASE_DIR / \\"staticfiles\\"\\nSTATICFILES_DIRS = [BASE_DIR / \\"assets\\"]\\n" >> mysite/settings.py && mkdir -p assets && echo "body { color: red }" > assets/site.css'

const FLASK_APP = `import sqlite3
from flask import Flask, request
import click

app = Flask(__name__)
DB = "app.db"

@app.cli.command("init-db")
def init_db():
    with sqlite3.connect(DB) as c:
        c.execute("create table if not exists notes(body text)")
    click.echo("initialised")

@app.post("/notes")
def add():
    with sqlite3.connect(DB) as c:
        c.execute("insert into notes values (?)", (request.form["body"],))
    return "ok"
`
const FLASK_POST = `python3 -c "from app import app; r = app.test_client().post('/notes', data={'body': 'hi'}); assert r.status_code == 200, r.status_code"`

// --- atomic replace ----------------------------------------------------------
const PY_REPLACE = `python3 -c "import os, tempfile; fd, p = tempfile.mkstemp(dir='.', prefix='.cfg'); os.write(fd, b'{\\"v\\": 2}'); os.close(fd); os.replace(p, 'config.json')"`
const NODE_REPLACE = `node -e "const fs = require('fs'); fs.writeFileSync('data.json.tmp-' + process.pid, '{\\"v\\": 2}'); fs.renameSync('data.json.tmp-' + process.pid, 'data.json')"`
const SETUP_PY = "from setuptools import setup\nsetup(name='tinypkg', version='0.1', py_modules=['tinypkg'])\n"
// conftest.py at the root: pytest puts the root on sys.path, so `import pkg` works.
const PY_TESTS = { 'conftest.py': '', 'pkg/__init__.py': '', 'pkg/mod.py': 'X = 1\n', 'tests/test_mod.py': 'import pkg.mod\n\n\ndef test_x():\n    assert pkg.mod.X == 1\n' }

/** ruff names its cache files after a hash of the project's path, which differs between the runs. */
const RUFF_CACHE = /^\.ruff_cache\/[^/]+\/\d+$/
const RUFF_WROTE = 'ls .ruff_cache/*/ | grep -qE "^[0-9]+$"'

// --- npm ---------------------------------------------------------------------
const NPM_APP = {
  'lib/package.json': '{"name": "tiny-lib", "version": "1.0.0", "main": "index.js"}\n',
  'lib/index.js': 'module.exports = 42;\n',
  'package.json': '{"name": "app", "version": "1.0.0", "private": true}\n',
}
const PACK = 'cd lib && npm pack --loglevel=error >/dev/null'
const NPM_INSTALL = 'npm install --offline --no-audit --no-fund --loglevel=error ./lib/tiny-lib-1.0.0.tgz'

// --- archives, builds --------------------------------------------------------
const SITE = { 'site/index.html': '<p>v1</p>\n', 'site/css/a.css': 'p { color: red }\n' }
/** The archives hold v2; the workspace holds v1 of the same names. */
const ARCHIVES = 'mkdir -p /tmp/.everyday-$$ && cp -r site /tmp/.everyday-$$/ && sed -i s/v1/v2/ /tmp/.everyday-$$/site/index.html && tar -czf site.tgz -C /tmp/.everyday-$$ site && (cd /tmp/.everyday-$$ && zip -qr - site) > site.zip; rm -rf /tmp/.everyday-$$'
const V2 = 'grep -q v2 site/index.html'
const VITE_APP = { 'index.html': '<!doctype html>\n<html><body><script type="module" src="/main.js"></script></body></html>\n', 'main.js': 'document.body.append("hi")\n' }
const MAKEFILE = {
  Makefile: 'all: hello out/data.txt\n\nhello: hello.o\n\tcc -o hello hello.o\n\nhello.o: hello.c\n\tcc -c hello.c\n\nout/data.txt: input.txt\n\tmkdir -p out\n\tsed s/a/b/ input.txt > out/data.txt\n\nclean:\n\trm -rf hello hello.o out\n\n.PHONY: all clean\n',
  'hello.c': 'int main(void) { return 0; }\n',
  'input.txt': 'banana\n',
}
const ROTATE = (n) => `python3 -c "import logging, logging.handlers as h; l = logging.getLogger('app'); l.addHandler(h.RotatingFileHandler('app.log', maxBytes=200, backupCount=2)); l.setLevel(logging.INFO); [l.info('line %d of a log that rotates', i) for i in range(${n})]"`

const CRATE = { 'Cargo.toml': '[package]\nname = "tiny"\nversion = "0.1.0"\nedition = "2021"\n\n[dependencies]\n', 'src/main.rs': 'fn main() {}\n' }

// --- git ---------------------------------------------------------------------
const REPO = 'git init -q && git add -A && git commit -qm one'
const LIBFOO = 'git init -q ../libfoo && echo foo > ../libfoo/foo.c && git -C ../libfoo add -A && git -C ../libfoo commit -qm foo'

export const LINES = [
  // SQLite: every commit removes its rollback journal; WAL's files live on.
  { id: 'sqlite-create', family: 'sqlite', needs: ['sqlite3'], line: DB, check: count(1) },
  { id: 'sqlite-insert', family: 'sqlite', needs: ['sqlite3'], scene: [DB], line: 'sqlite3 app.db "insert into t values (2)"', check: `${NO_SIDECARS} && ${count(2)}` },
  { id: 'sqlite-update-transaction', family: 'sqlite', needs: ['sqlite3'], scene: [DB], line: 'sqlite3 app.db "begin; insert into t values (2); update t set x = x + 1; commit"', check: `${NO_SIDECARS} && ${count(2)}` },
  { id: 'sqlite-select', family: 'sqlite', needs: ['sqlite3'], scene: [DB], line: 'sqlite3 app.db "select count(*) from t"', check: count(1) },
  { id: 'sqlite-dump', family: 'sqlite', needs: ['sqlite3'], scene: [DB], line: 'sqlite3 app.db .dump > dump.sql', check: 'grep -q "INSERT INTO t" dump.sql' },
  { id: 'sqlite-wal-write', family: 'sqlite', needs: ['sqlite3'], scene: [DB], line: 'sqlite3 app.db "pragma journal_mode=wal; insert into t values (2)"', check: `${NO_SIDECARS} && ${count(2)}` },
  { id: 'sqlite-wal-later-call', family: 'sqlite', needs: ['sqlite3', 'python3'], scene: [WAL_LEFT, 'test -e app.db-wal'], line: 'sqlite3 app.db "insert into t values (2)"', check: `${NO_SIDECARS} && ${count(2)}` },
  { id: 'sqlite-wal-read-later-call', family: 'sqlite', needs: ['sqlite3', 'python3'], scene: [WAL_LEFT], line: 'sqlite3 app.db "select count(*) from t"', check: `${NO_SIDECARS} && ${count(1)}` },
  { id: 'sqlite-hot-journal', family: 'sqlite', needs: ['sqlite3', 'python3'], scene: [DB, HOT_JOURNAL, 'test -s app.db-journal'], line: 'sqlite3 app.db "select count(*) from t"', check: `${NO_SIDECARS} && ${count(1)}` },
  { id: 'sqlite-vacuum', family: 'sqlite', needs: ['sqlite3'], scene: [DB], line: 'sqlite3 app.db "delete from t; vacuum"', check: `${NO_SIDECARS} && ${count(0)}` },
  { id: 'python-sqlite3', family: 'sqlite', needs: ['sqlite3', 'python3'], scene: [DB], line: `python3 -c "import sqlite3; c = sqlite3.connect('app.db'); c.execute('insert into t values (2)'); c.commit()"`, check: `${NO_SIDECARS} && ${count(2)}` },
  { id: 'python-sqlite3-script', family: 'sqlite', needs: ['sqlite3', 'python3'], files: { 'load.py': "import sqlite3\nc = sqlite3.connect('app.db')\nc.executemany('insert into t values (?)', [(i,) for i in range(5)])\nc.commit()\n" }, scene: [DB], line: 'python3 load.py', check: `${NO_SIDECARS} && ${count(6)}` },
  { id: 'django-migrate', family: 'sqlite', needs: ['django-admin', 'python3'], scene: [DJANGO], line: 'python3 manage.py migrate -v 0', check: 'test "$(sqlite3 db.sqlite3 "select count(*) from django_migrations")" -gt 10' },
  { id: 'django-migrate-again', family: 'sqlite', needs: ['django-admin', 'python3', 'sqlite3'], scene: [DJANGO, 'python3 manage.py migrate -v 0'], line: 'python3 manage.py migrate -v 0', check: 'test ! -e db.sqlite3-journal' },
  { id: 'django-create-user', family: 'sqlite', needs: ['django-admin', 'python3', 'sqlite3'], scene: [DJANGO, 'python3 manage.py migrate -v 0'], line: `python3 manage.py shell -c "from django.contrib.auth.models import User; User.objects.create_user('ada')"`, check: 'test "$(sqlite3 db.sqlite3 "select username from auth_user")" = ada' },
  { id: 'flask-init-db', family: 'sqlite', needs: ['flask', 'sqlite3'], files: { 'app.py': FLASK_APP }, line: 'flask --app app init-db', check: 'sqlite3 app.db .tables | grep -q notes' },
  { id: 'flask-post-writes', family: 'sqlite', needs: ['flask', 'sqlite3', 'python3'], files: { 'app.py': FLASK_APP }, scene: ['flask --app app init-db'], line: FLASK_POST, check: 'test "$(sqlite3 app.db "select body from notes")" = hi && test ! -e app.db-journal' },

  // Atomic replace: a temp file the call made, renamed over (or into) its place.
  { id: 'python-os-replace-existing', family: 'atomic', needs: ['python3'], files: { 'config.json': '{"v": 1}' }, line: PY_REPLACE, check: 'grep -q 2 config.json && test -z "$(ls -A | grep "^.cfg")"' },
  { id: 'python-os-replace-new', family: 'atomic', needs: ['python3'], line: PY_REPLACE, check: 'grep -q 2 config.json && test -z "$(ls -A | grep "^.cfg")"' },
  { id: 'python-write-then-remove-temp', family: 'atomic', needs: ['python3'], line: `python3 -c "import os; open('scratch.tmp', 'w').write('x'); os.remove('scratch.tmp')"`, check: 'test ! -e scratch.tmp' },
  { id: 'python-tempdir-in-workspace', family: 'atomic', needs: ['python3'], line: `python3 -c "import tempfile, os; d = tempfile.mkdtemp(dir='.'); open(os.path.join(d, 'x'), 'w').write('x'); import shutil; shutil.rmtree(d)"`, check: 'test -z "$(ls -A)"' },
  { id: 'node-rename-existing', family: 'atomic', needs: ['node'], files: { 'data.json': '{"v": 1}' }, line: NODE_REPLACE, check: 'grep -q 2 data.json && test -z "$(ls | grep tmp)"' },
  { id: 'node-rename-new', family: 'atomic', needs: ['node'], line: NODE_REPLACE, check: 'grep -q 2 data.json && test -z "$(ls | grep tmp)"' },
  { id: 'ln-sfn-swap', family: 'atomic', needs: ['ln'], scene: ['mkdir v1 v2 && ln -s v1 current'], line: 'ln -sfn v2 current', check: 'test "$(readlink current)" = v2' },
  { id: 'zip-new-archive', family: 'atomic', needs: ['zip'], files: SITE, line: 'zip -qr site.zip site', check: 'unzip -l site.zip | grep -q index.html && test -z "$(ls | grep "^zi")"' },
  { id: 'zip-update-archive', family: 'atomic', needs: ['zip'], files: SITE, scene: ['zip -qr site.zip site', 'echo more > site/more.txt'], line: 'zip -qr site.zip site', check: 'unzip -l site.zip | grep -q more.txt && test -z "$(ls | grep "^zi")"' },
  { id: 'dbm-dumb-existing', family: 'atomic', needs: ['python3'], scene: [`python3 -c "import dbm.dumb as d; s = d.open('cache', 'c'); s['a'] = b'1'; s.close()"`], line: `python3 -c "import dbm.dumb as d; s = d.open('cache', 'c'); s['b'] = b'2'; s.close()"`, check: `python3 -c "import dbm.dumb as d; s = d.open('cache', 'r'); assert s['b'] == b'2'"` },
  { id: 'shelve-existing', family: 'atomic', needs: ['python3'], scene: [`python3 -c "import shelve; s = shelve.open('store'); s['a'] = 1; s.close()"`], line: `python3 -c "import shelve; s = shelve.open('store'); s['b'] = 2; s.close()"`, check: `python3 -c "import shelve; s = shelve.open('store', 'r'); assert s['b'] == 2"` },
  { id: 'setup-py-egg-info', family: 'atomic', needs: ['python3'], files: { 'setup.py': SETUP_PY, 'tinypkg.py': 'X = 1\n' }, line: 'python3 setup.py -q egg_info', check: 'test -f tinypkg.egg-info/PKG-INFO' },
  { id: 'setup-py-egg-info-again', family: 'atomic', needs: ['python3'], files: { 'setup.py': SETUP_PY, 'tinypkg.py': 'X = 1\n' }, scene: ['python3 setup.py -q egg_info', "sed -i s/0.1/0.2/ setup.py"], line: 'python3 setup.py -q egg_info', check: 'grep -q "Version: 0.2" tinypkg.egg-info/PKG-INFO' },
  { id: 'npm-install-lockfile-rewrite', family: 'atomic', needs: ['npm'], files: NPM_APP, scene: [PACK, NPM_INSTALL, "sed -i 's/42/43/' lib/index.js && sed -i 's/1.0.0/1.0.1/' lib/package.json", PACK], line: 'npm install --offline --no-audit --no-fund --loglevel=error ./lib/tiny-lib-1.0.1.tgz', check: `node -e 'process.exit(require("tiny-lib") === 43 ? 0 : 1)' && grep -q 1.0.1 package-lock.json` },
  { id: 'npm-pkg-set', family: 'atomic', needs: ['npm'], files: NPM_APP, line: 'npm pkg set description=tiny', check: 'grep -q tiny package.json' },

  // Tool state made during the call: pytest's and ruff's caches, by a temp folder renamed into place.
  { id: 'pytest-first-run', family: 'atomic', needs: ['pytest'], files: PY_TESTS, line: 'pytest -q', check: 'test -d .pytest_cache/v', ignore: /__pycache__/ },
  { id: 'pytest-second-run', family: 'atomic', needs: ['pytest'], files: PY_TESTS, scene: ['pytest -q'], line: 'pytest -q', check: 'test -d .pytest_cache/v', ignore: /__pycache__/ },
  { id: 'pytest-failing-then-lf', family: 'atomic', needs: ['pytest'], files: { ...PY_TESTS, 'tests/test_bad.py': 'def test_bad():\n    assert False\n' }, scene: ['pytest -q || true', 'rm tests/test_bad.py'], line: 'pytest -q --lf', check: 'test -f .pytest_cache/v/cache/lastfailed || test -d .pytest_cache/v', ignore: /__pycache__/ },
  { id: 'ruff-first-run', family: 'atomic', needs: ['ruff'], files: { 'a.py': 'import os\n' }, line: 'ruff check -q --exit-zero .', check: RUFF_WROTE, ignore: RUFF_CACHE },
  { id: 'ruff-second-run', family: 'atomic', needs: ['ruff'], files: { 'a.py': 'import os\n' }, scene: ['ruff check -q --exit-zero .', "echo 'import sys' >> a.py"], line: 'ruff check -q --exit-zero .', check: RUFF_WROTE, ignore: RUFF_CACHE },
  { id: 'ruff-format', family: 'atomic', needs: ['ruff'], files: { 'a.py': 'x  =  1\n' }, line: 'ruff format -q .', check: `grep -qx "x = 1" a.py && ${RUFF_WROTE}`, ignore: RUFF_CACHE },

  // Tools that remove or replace an existing entry inside their own work.
  { id: 'tar-extract-fresh', family: 'internal', needs: ['tar', 'zip'], files: SITE, scene: [ARCHIVES, 'rm -rf site'], line: 'tar -xzf site.tgz', check: V2 },
  { id: 'tar-extract-over', family: 'internal', needs: ['tar', 'zip'], files: SITE, scene: [ARCHIVES], line: 'tar -xzf site.tgz', check: V2 },
  { id: 'tar-extract-over-dir', family: 'internal', needs: ['tar', 'zip'], files: SITE, scene: [ARCHIVES, 'mkdir -p out && tar -xzf site.tgz -C out && echo v1 > out/site/index.html'], line: 'tar -xzf site.tgz -C out', check: 'grep -q v2 out/site/index.html' },
  { id: 'tar-create-over', family: 'internal', needs: ['tar', 'zip'], files: SITE, scene: [ARCHIVES], line: 'tar -czf site.tgz site', check: 'tar -tzf site.tgz | grep -q index.html' },
  { id: 'unzip-fresh', family: 'internal', needs: ['unzip', 'zip'], files: SITE, scene: [ARCHIVES], line: 'unzip -q site.zip -d fresh', check: 'grep -q v2 fresh/site/index.html' },
  { id: 'unzip-o-over', family: 'internal', needs: ['unzip', 'zip'], files: SITE, scene: [ARCHIVES], line: 'unzip -oq site.zip', check: V2 },
  { id: 'unzip-o-over-dir', family: 'internal', needs: ['unzip', 'zip'], files: SITE, scene: [ARCHIVES, 'unzip -q site.zip -d out && echo v1 > out/site/index.html'], line: 'unzip -oq site.zip -d out', check: 'grep -q v2 out/site/index.html' },
  { id: 'vite-build-fresh', family: 'internal', needs: ['vite'], files: VITE_APP, line: 'vite build --logLevel error', check: 'test -f dist/index.html' },
  { id: 'vite-build-again', family: 'internal', needs: ['vite'], files: VITE_APP, scene: ['vite build --logLevel error', "echo 'document.body.append(\"again\")' >> main.js"], line: 'vite build --logLevel error', check: 'test -f dist/index.html && grep -rq again dist/assets' },
  { id: 'vite-build-outdir', family: 'internal', needs: ['vite'], files: VITE_APP, scene: ['vite build --logLevel error --outDir build', "echo 'document.body.append(\"again\")' >> main.js"], line: 'vite build --logLevel error --outDir build', check: 'grep -rq again build/assets' },
  { id: 'collectstatic-fresh', family: 'internal', needs: ['django-admin', 'python3'], scene: [DJANGO], line: 'python3 manage.py collectstatic --noinput -v 0', check: 'test -f staticfiles/site.css' },
  { id: 'collectstatic-changed', family: 'internal', needs: ['django-admin', 'python3'], scene: [DJANGO, 'python3 manage.py collectstatic --noinput -v 0', 'sleep 1 && echo "body { color: blue }" > assets/site.css'], line: 'python3 manage.py collectstatic --noinput -v 0', check: 'grep -q blue staticfiles/site.css' },
  { id: 'collectstatic-clear', family: 'internal', needs: ['django-admin', 'python3'], scene: [DJANGO, 'python3 manage.py collectstatic --noinput -v 0'], line: 'python3 manage.py collectstatic --noinput --clear -v 0', check: 'test -f staticfiles/site.css' },
  { id: 'make-build', family: 'internal', needs: ['make', 'cc'], files: MAKEFILE, line: 'make -s', check: 'test -x hello && grep -q bbnana out/data.txt' },
  { id: 'make-rebuild', family: 'internal', needs: ['make', 'cc'], files: MAKEFILE, scene: ['make -s', "sleep 1 && echo '/* edit */' >> hello.c"], line: 'make -s', check: 'test -x hello' },
  { id: 'make-clean', family: 'internal', needs: ['make', 'cc'], files: MAKEFILE, scene: ['make -s'], line: 'make -s clean', check: 'test ! -e hello && test ! -e out' },
  { id: 'log-rotation-in-call', family: 'internal', needs: ['python3'], line: ROTATE(40), check: 'test -f app.log && test -f app.log.1' },
  { id: 'log-rotation-later-call', family: 'internal', needs: ['python3'], scene: [ROTATE(3)], line: ROTATE(40), check: 'test -f app.log.1 && test -f app.log.2 && ! grep -q "line 0 " app.log' },

  // State folders: a home with none of them yet, and tool state made during the call.
  { id: 'npm-install-no-npm-cache', family: 'state', needs: ['npm'], files: NPM_APP, scene: [PACK, 'rm -rf ../home/.npm'], line: NPM_INSTALL, check: `node -e 'process.exit(require("tiny-lib") === 42 ? 0 : 1)'` },
  { id: 'npm-pack-no-npm-cache', family: 'state', needs: ['npm'], files: NPM_APP, scene: ['rm -rf ../home/.npm'], line: PACK, check: 'test -f lib/tiny-lib-1.0.0.tgz' },
  { id: 'rm-rf-node-modules-then-npm-ci', family: 'state', needs: ['npm'], files: NPM_APP, scene: [PACK, NPM_INSTALL], line: 'rm -rf node_modules && npm ci --offline --no-audit --no-fund --loglevel=error', check: `node -e 'process.exit(require("tiny-lib") === 42 ? 0 : 1)'` },
  { id: 'npm-ci-with-cache', family: 'state', needs: ['npm'], files: NPM_APP, scene: [PACK, NPM_INSTALL, 'rm -rf node_modules'], line: 'npm ci --offline --no-audit --no-fund --loglevel=error', check: `node -e 'process.exit(require("tiny-lib") === 42 ? 0 : 1)'` },
  { id: 'pnpm-install-no-store', family: 'state', needs: ['pnpm', 'npm'], files: NPM_APP, scene: [PACK, `printf '{"name": "app", "version": "1.0.0", "private": true, "dependencies": {"tiny-lib": "file:lib/tiny-lib-1.0.0.tgz"}}' > package.json`], line: 'pnpm install --offline --reporter=silent', check: `node -e 'process.exit(require("tiny-lib") === 42 ? 0 : 1)'` },
  { id: 'black-no-cache-home', family: 'state', needs: ['black'], files: { 'a.py': 'x  =  1\n' }, line: 'black -q a.py', check: 'grep -qx "x = 1" a.py' },
  { id: 'black-second-run', family: 'state', needs: ['black'], files: { 'a.py': 'x  =  1\n' }, scene: ['black -q a.py', 'echo "y  =  2" >> a.py'], line: 'black -q a.py', check: 'grep -qx "y = 2" a.py' },
  { id: 'cargo-build-fresh-home', family: 'state', needs: ['cargo'], files: CRATE, line: 'cargo build -q --offline', check: 'test -x target/debug/tiny', ignore: /^target\// },
  { id: 'cargo-fetch-fresh-home', family: 'state', needs: ['cargo'], files: CRATE, line: 'cargo fetch --offline', check: 'test -f Cargo.lock' },
  { id: 'cargo-fetch-cargo-home', family: 'state', needs: ['cargo'], files: CRATE, scene: ['cargo fetch --offline && rm Cargo.lock'], line: 'cargo fetch --offline', check: 'test -f Cargo.lock' },
  { id: 'pip-install-editable', family: 'state', needs: ['python3'], files: { 'setup.py': SETUP_PY, 'tinypkg.py': 'X = 1\n' }, scene: ['python3 -m venv .venv'], line: '.venv/bin/pip install -q --no-index --no-build-isolation -e .', check: '.venv/bin/python -c "import tinypkg"', ignore: /^\.venv\/|^build\// },
  { id: 'pytest-cache-then-clear', family: 'state', needs: ['pytest'], files: PY_TESTS, scene: ['pytest -q'], line: 'pytest -q --cache-clear', check: 'test -d .pytest_cache', ignore: /__pycache__/ },

  // git on a line with other programs, and the cards that under-ask.
  { id: 'git-add-commit', family: 'git', needs: ['git'], files: { 'a.txt': 'a\n' }, scene: [REPO, 'echo b >> a.txt'], line: 'git add -A && git commit -qm two', check: 'test "$(git log --format=%s -1)" = two && test ! -e .git/index.lock' },
  { id: 'git-commit-then-npm-version', family: 'git', needs: ['git', 'npm'], files: { 'package.json': '{"name": "app", "version": "1.0.0"}\n' }, scene: [REPO, 'echo x > b.txt'], line: 'git add -A && git commit -qm two && npm version patch -m "v%s"', check: 'grep -q 1.0.1 package.json && test "$(git log --format=%s -1)" = v1.0.1 && test ! -e .git/index.lock' },
  { id: 'npm-version-in-repo', family: 'git', needs: ['git', 'npm'], files: { 'package.json': '{"name": "app", "version": "1.0.0"}\n' }, scene: [REPO], line: 'npm version minor -m "v%s"', check: 'git tag | grep -qx v1.1.0 && test ! -e .git/index.lock' },
  { id: 'git-c-commit', family: 'git', needs: ['git'], files: { 'a.txt': 'a\n' }, scene: [REPO, 'echo b >> a.txt'], line: 'git -c user.name=Ada -c user.email=ada@example.invalid commit -qam two', check: 'test "$(git log --format=%an -1)" = Ada && test ! -e .git/index.lock' },
  { id: 'git-status-and-test', family: 'git', needs: ['git', 'python3'], files: { 'a.txt': 'a\n', 't.py': 'print("ok")\n' }, scene: [REPO], line: 'git status --short && python3 t.py', check: 'test ! -e .git/index.lock' },
  { id: 'git-submodule-add', family: 'git', needs: ['git'], files: { 'a.txt': 'a\n' }, scene: [REPO, LIBFOO], line: 'git submodule add -q ../libfoo libfoo', check: 'test -f libfoo/foo.c && grep -q libfoo .gitmodules' },
  { id: 'git-c-submodule-add', family: 'git', needs: ['git'], files: { 'a.txt': 'a\n' }, scene: [REPO, LIBFOO], line: 'git -c protocol.file.allow=always submodule add -q ../libfoo libfoo', check: 'test -f libfoo/foo.c && grep -q libfoo .gitmodules' },
  { id: 'git-worktree-add', family: 'git', needs: ['git'], files: { 'a.txt': 'a\n' }, scene: [REPO], line: 'git worktree add -q ../x', check: 'test -f ../x/a.txt && git worktree list | grep -q /x' },
  { id: 'git-checkout-branch', family: 'git', needs: ['git'], files: { 'a.txt': 'a\n' }, scene: [REPO, 'git checkout -qb feature && echo f > a.txt && git commit -qam f && git checkout -q main'], line: 'git checkout -q feature', check: 'grep -qx f a.txt' },
  { id: 'git-stash-and-pop', family: 'git', needs: ['git'], files: { 'a.txt': 'a\n' }, scene: [REPO, 'echo wip >> a.txt'], line: 'git stash -q && git stash pop -q', check: 'grep -q wip a.txt' },
]

/** Files every entry's home starts with. */
export const HOME = HOME_FILES
