"""Small Python programs run *inside the target interpreter* (``python -c CODE args``).

They are plain text so the same argv works from the executor, in ``--dry-run`` output and in a rendered
``--script``: the target machine needs nothing but its own Python. They read installed versions from
dist-info metadata (``importlib.metadata``) and never import the framework, so verification is fast and
works without a GPU.
"""

from __future__ import annotations

MARKER = "# written by gpusetup"

# argv: name==version | name==X.Y.* | either followed by +tag (the build tag must then be exactly that, e.g.
# torch==2.14.*+cu126) | name (any version) → exit 0 when every package is installed as planned.
VERIFY = """\
import sys, importlib.metadata as md
bad, good = [], []
for spec in sys.argv[1:]:
    name, _, want = spec.partition('==')
    name = name.split('[')[0].strip()
    wpub, _, wloc = want.strip().partition('+')
    try:
        got = md.version(name)
    except md.PackageNotFoundError:
        bad.append(f'{name} is not installed (planned {want or "any version"})')
        continue
    pub, _, loc = got.partition('+')
    if wpub.endswith('.*'):
        ok_pub = pub == wpub[:-2] or pub.startswith(wpub[:-1])
    else:
        ok_pub = not wpub or pub == wpub
    ok_loc = not wloc or loc.lower() == wloc.lower()
    if ok_pub and ok_loc:
        good.append(f'{name} {got}')
        continue
    why = ''
    if not ok_loc:
        why = f' - this is the {loc or "default"} build, the plan asked for the {wloc} build'
        if loc.startswith('cpu') or not loc:
            why += ' (a CPU-only build would leave your GPU unused)'
    bad.append(f'{name} {got} is installed, but the plan is {name} {want}{why}')
if bad:
    print('Verification failed:', file=sys.stderr)
    for line in bad:
        print('  ' + line, file=sys.stderr)
    sys.exit(1)
print('Verified: ' + ', '.join(good))
"""

# The *.dist-info folders on this interpreter's path, read from the file system: (folder, name, version from the
# folder's name, whether its METADATA names the distribution, whether it has a RECORD). A folder whose METADATA is
# empty or torn (pip was stopped while writing it) is invisible to importlib.metadata, yet pip reads the folder's
# name and says "Requirement already satisfied".
_FOLDERS = """\
import os, re, sys
def norm(n):
    return re.sub(r'[-_.]+', '-', n or '').lower()
def folders():
    seen = set()
    for base in sys.path:
        try:
            entries = sorted(os.listdir(base or '.'))
        except OSError:
            continue
        for e in entries:
            if not e.endswith('.dist-info') or '-' not in e:
                continue
            path = os.path.join(base, e)
            name, _, version = e[:-len('.dist-info')].partition('-')
            if norm(name) in seen:
                continue
            seen.add(norm(name))
            try:
                with open(os.path.join(path, 'METADATA'), encoding='utf-8', errors='replace') as fh:
                    named = any(line.lower().startswith('name:') for line in fh.read(65536).splitlines())
            except OSError:
                named = False
            yield path, norm(name), version, named, os.path.exists(os.path.join(path, 'RECORD'))
"""

# argv: → prints {"name": "version"} of every distribution (names normalised to lower-case, - for _); one whose
# metadata is torn is listed by its folder's name.
LIST = (
    _FOLDERS
    + """\
import json, importlib.metadata as md
out = {}
for d in md.distributions():
    n = (d.metadata['Name'] or '').lower().replace('_', '-')
    if n and n not in out:
        out[n] = d.version
for path, name, version, named, record in folders():
    if not named:
        out.setdefault(name, version)
print(json.dumps(out, sort_keys=True))
"""
)

# Files gpusetup writes are recognised by a hash of what it wrote, never by their name or a marker: the
# executor passes the hashes it recorded in GPUSETUP_WRITTEN ({"/abs/path": ["sha256 hex", ...]}); a file that is
# there with another content (the user's own, or edited since) is left alone and said ("gpusetup: left …").
_WRITTEN = """\
import sys, os, json, hashlib
known = json.loads(os.environ.get('GPUSETUP_WRITTEN') or '{}')
def digest(path):
    try:
        with open(path, 'rb') as fh:
            return hashlib.sha256(fh.read()).hexdigest()
    except FileNotFoundError:
        return None
"""

# argv: CONSTRAINTS_FILE (relative to the env's prefix) name ... → writes name==installed-version lines; also the
# env's pip.conf so every later `pip install` in this env honours the constraints automatically. Either file is
# written only where there is none, or where it is still exactly what gpusetup wrote; prints
# "gpusetup: wrote SHA256 PATH" for each file written, "gpusetup: left existing PATH" for one left alone.
PROTECT = (
    _WRITTEN
    + """\
import importlib.metadata as md
def write(path, text):
    have = digest(path)
    if have is not None and have not in known.get(path, []):
        print('gpusetup: left existing ' + path)
        return False
    data = text.encode('utf-8')
    with open(path, 'wb') as fh:
        fh.write(data)
    print('gpusetup: wrote ' + hashlib.sha256(data).hexdigest() + ' ' + path)
    return True
path, names = os.path.join(sys.prefix, sys.argv[1]), sys.argv[2:]
lines = ['MARKER - keeps these exact builds; pip refuses to swap them for another build.']
for n in names:
    lines.append(f'{n}=={md.version(n)}')
conf = os.path.join(sys.prefix, 'pip.ini' if os.name == 'nt' else 'pip.conf')
if not write(path, '\\n'.join(lines) + '\\n'):
    print(path + ' was already there (not written by gpusetup): left as it is, so these builds are not pinned.')
elif write(conf, 'MARKER\\n[install]\\nconstraint = ' + path + '\\n'):
    print('Protected: ' + conf + ' makes pip in this environment honour ' + path)
else:
    print('This environment already has ' + conf + '; use: pip install -c ' + path + ' ...')
"""
).replace("MARKER", MARKER)

# argv: FILE (relative to the env's prefix) ... → removes each file only when it is exactly what gpusetup wrote
# (its hash is in GPUSETUP_WRITTEN); "gpusetup: left changed|existing PATH" for one that is not.
REMOVE_OURS = (
    _WRITTEN
    + """\
for p in sys.argv[1:]:
    p = os.path.join(sys.prefix, p)
    have = digest(p)
    if have is None:
        continue
    if have in known.get(p, []):
        os.remove(p)
        print('removed ' + p)
    else:
        print('gpusetup: left ' + ('changed ' if p in known else 'existing ') + p)
"""
)

# argv: NAME=VALUE ... → the runtime variables the build needs, set on activation: a marked block at the end of
# a venv's activate / activate.fish / Activate.ps1, or a conda env's etc/conda/activate.d/gpusetup-env.sh.
# With no NAME=VALUE it removes what it wrote (the undo).
ACTIVATE_ENV = (
    """\
import sys, os, re
pairs = [a.split('=', 1) for a in sys.argv[1:]]
begin, end = 'MARKER: runtime settings for the GPU build (gpusetup plan explains them)', '# end of gpusetup settings'
block_re = re.compile('\\n?' + re.escape(begin) + '.*?' + re.escape(end) + '\\n', re.S)
if os.path.isdir(os.path.join(sys.prefix, 'conda-meta')):
    path = os.path.join(sys.prefix, 'etc', 'conda', 'activate.d', 'gpusetup-env.sh')
    if pairs:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, 'w', encoding='utf-8') as fh:
            fh.write(begin + '\\n' + ''.join(f'export {k}="{v}"\\n' for k, v in pairs) + end + '\\n')
        print('wrote ' + path)
    elif os.path.exists(path):
        os.remove(path)
        print('removed ' + path)
    sys.exit(0)
bindir = os.path.join(sys.prefix, 'Scripts' if os.name == 'nt' else 'bin')
forms = {'activate': 'export {k}="{v}"', 'activate.fish': 'set -gx {k} "{v}"', 'Activate.ps1': '$env:{k} = "{v}"'}
for name, form in forms.items():
    path = os.path.join(bindir, name)
    if not os.path.exists(path):
        continue
    with open(path, encoding='utf-8') as fh:
        text = block_re.sub('', fh.read())
    if pairs:
        text += '\\n' + begin + '\\n' + ''.join(form.format(k=k, v=v) + '\\n' for k, v in pairs) + end + '\\n'
    with open(path, 'w', encoding='utf-8') as fh:
        fh.write(text)
    print(('set ' + ', '.join(k for k, _ in pairs) + ' in ' if pairs else 'cleaned ') + path)
"""
).replace("MARKER", MARKER)

# argv: VENV_DIR [--interrupted] → removes a virtual environment, and refuses anything that does not look like one.
# Its pyvenv.cfg goes last, so a removal that is interrupted (power cut, kill) can be run again. --interrupted
# (the journal says this removal started and did not end): the folder may have lost its pyvenv.cfg already.
RMTREE_VENV = """\
import sys, os, shutil
p = sys.argv[1]
if not os.path.exists(p):
    print('already gone: ' + p)
    sys.exit(0)
cfg = os.path.join(p, 'pyvenv.cfg')
if not os.path.isfile(cfg) and '--interrupted' not in sys.argv[2:]:
    print('refusing to delete ' + p + ': it is not a virtual environment (no pyvenv.cfg)', file=sys.stderr)
    sys.exit(1)
for entry in os.scandir(p):
    if entry.name == 'pyvenv.cfg':
        continue
    if entry.is_dir(follow_symlinks=False):
        shutil.rmtree(entry.path)
    else:
        os.remove(entry.path)
if os.path.exists(cfg):
    os.remove(cfg)
os.rmdir(p)
print('removed ' + p)
"""

# argv: SECONDS REQUIREMENT ... → checks every installed file of the requested distributions and of everything
# they depend on (Requires-Dist, markers and extras evaluated when `packaging` is there, as pip would) against
# the sha256 in the distribution's RECORD: the check pip itself never makes. A file missing or different, a
# RECORD missing (an install that stopped before pip wrote it) or a required distribution that is not installed
# fails it (exit 1); not finished within SECONDS fails it too (exit 3). The last line is machine-readable:
# "gpusetup-check: {json}" with the broken distributions ({name: version}) for a repair.
CHECK_FILES = _FOLDERS + """\
import csv, json, time, base64, hashlib, importlib.metadata as md
deadline = time.monotonic() + float(sys.argv[1])
try:
    from packaging.requirements import Requirement
except Exception:
    try:
        from pip._vendor.packaging.requirements import Requirement
    except Exception:
        Requirement = None
def parse(text):
    if Requirement is not None:
        try:
            r = Requirement(text)
            return norm(r.name), set(r.extras), r.marker
        except Exception:
            return None
    m = re.match(r'\\s*([A-Za-z0-9][A-Za-z0-9._-]*)\\s*(\\[[^\\]]*\\])?', text)
    if not m or ';' in text:
        return None
    return norm(m.group(1)), set((m.group(2) or '[]')[1:-1].replace(' ', '').split(',')) - {''}, None
dists, torn = {}, {}
for d in md.distributions():
    n = norm(d.metadata['Name'])
    if n and n not in dists:
        dists[n] = d
for path, name, version, named, record in folders():
    if not named and name not in dists:
        torn[name] = version
todo = []
for a in sys.argv[2:]:
    p = parse(a)
    if p:
        todo.append((p[0], p[1], None))
seen, broken, missing, lines = {}, {}, {}, []
while todo:
    name, extras, parent = todo.pop(0)
    if name in seen and extras <= seen[name]:
        continue
    seen[name] = seen.get(name, set()) | extras
    d = dists.get(name)
    if d is None and name in torn:
        broken[name] = torn[name]
        lines.append(f'{name} {torn[name]}: its METADATA is empty or torn, so its installation did not finish')
        continue
    if d is None:
        missing[name] = parent or ''
        continue
    for req in d.requires or []:
        p = parse(req)
        if p is None:
            continue
        if p[2] is not None:
            try:
                if not any(p[2].evaluate({'extra': e}) for e in (seen[name] or {''})):
                    continue
            except Exception:
                continue
        todo.append((p[0], p[1], name))
files = nbytes = 0
for name in sorted(seen):
    d = dists.get(name)
    if d is None:
        continue
    where = str(getattr(d, '_path', '') or '')
    if where.endswith('.egg-info'):
        lines.append(f'{name} {d.version}: not checked (installed without a RECORD file, not from a wheel)')
        continue
    # RECORD itself, not Distribution.files: from Python 3.12 that leaves out the files that no longer exist,
    # which are exactly the ones this check is for (found on Ubuntu 24.04's Python 3.12)
    record = d.read_text('RECORD')
    if record is None:
        broken[name] = d.version
        lines.append(f'{name} {d.version}: its RECORD file is missing, so its installation did not finish')
        continue
    bad = []
    for row in csv.reader(record.splitlines()):
        if time.monotonic() > deadline:
            print(f'The file check did not finish within {sys.argv[1]} s (it had checked {files} files).')
            print('gpusetup-check: ' + json.dumps({'broken': broken, 'missing': missing, 'timeout': True}))
            sys.exit(3)
        if len(row) < 2 or '=' not in row[1]:
            continue  # RECORD's own line, .pyc files: no hash
        f = row[0]
        mode, _, value = row[1].partition('=')
        path = d.locate_file(f)
        try:
            h = hashlib.new(mode)
            with open(path, 'rb') as fh:
                for chunk in iter(lambda: fh.read(1 << 20), b''):
                    h.update(chunk)
                    nbytes += len(chunk)
        except FileNotFoundError:
            bad.append(f'missing: {f}')
            continue
        except (OSError, ValueError) as exc:
            bad.append(f'unreadable: {f} ({exc})')
            continue
        files += 1
        if base64.urlsafe_b64encode(h.digest()).rstrip(b'=').decode() != value:
            bad.append(f'changed: {f}')
    if bad:
        broken[name] = d.version
        lines.append(f'{name} {d.version}: {len(bad)} file(s) missing or different from its RECORD, e.g. ' + '; '.join(bad[:3]))
for name, parent in sorted(missing.items()):
    lines.append(f'{name} is not installed' + (f' (required by {parent})' if parent else ''))
for line in lines:
    print(line)
ok = not broken and not missing
print(('Checked' if ok else 'Problems found in') + f' {len(seen) - len(missing)} distribution(s): {files} files, {nbytes / 1e6:.0f} MB compared with their RECORD hashes.')
print('gpusetup-check: ' + json.dumps({'broken': broken, 'missing': missing}))
sys.exit(0 if ok else 1)
"""

# argv: SECONDS DISTRIBUTION ... → imports each distribution's module (the one named like it, else its first
# top-level module) in a fresh interpreter of this environment, so a crash or a hang in one is said as such,
# within SECONDS; prints the version or the last line of the error; exit 1 if any does not import.
IMPORT = """\
import sys, re, subprocess, time, importlib.metadata as md
limit, bad = float(sys.argv[1]), []
def norm(n):
    return re.sub(r'[-_.]+', '_', n).lower()
def module_of(dist):
    want = norm(dist)
    try:
        tops = sorted(m for m, ds in md.packages_distributions().items() if any(norm(d) == want for d in ds))
    except AttributeError:  # Python < 3.10: read the distribution's RECORD
        try:
            files = md.distribution(dist).files or []
        except md.PackageNotFoundError:
            files = []
        firsts = {str(f).split('/')[0] for f in files if not str(f).startswith('..')}
        tops = sorted({t[:-3] if t.endswith('.py') else t for t in firsts} - {'__pycache__'})
        tops = [t for t in tops if '.' not in t]
    tops = [t for t in tops if t.isidentifier() and not t.startswith('_')] or tops
    return next((t for t in tops if t.lower() == want), tops[0] if tops else want)
code = 'import importlib, sys; m = importlib.import_module(sys.argv[1]); print(getattr(m, "__version__", "") or "")'
for dist in sys.argv[2:]:
    name = module_of(dist)
    t0 = time.monotonic()
    try:
        r = subprocess.run([sys.executable, '-I', '-c', code, name], capture_output=True, text=True,
                           errors='replace', timeout=limit, stdin=subprocess.DEVNULL)
    except subprocess.TimeoutExpired:
        bad.append(name)
        print(f'{name}: import did not finish within {limit:g} s')
        continue
    took = time.monotonic() - t0
    if r.returncode == 0:
        print(f'{name} {r.stdout.strip()}: imports ({took:.1f} s)')
        continue
    bad.append(name)
    err = [ln for ln in r.stderr.strip().splitlines() if ln.strip()]
    why = err[-1].strip() if err else f'exit code {r.returncode}'
    if r.returncode < 0:
        why = f'the interpreter crashed (signal {-r.returncode})' + (': ' + why if err else '')
    print(f'{name}: does not import: {why}')
    for ln in err[-4:-1]:
        print('    ' + ln)
sys.exit(1 if bad else 0)
"""

# argv: NAME ... → before such distributions are reinstalled: removes each one's *.dist-info folder when it has no
# RECORD or its METADATA names nothing (pip stopped before finishing them), so pip neither says "already satisfied"
# nor refuses to uninstall it.
CLEAR_BROKEN = (
    _FOLDERS
    + """\
import shutil
want = {norm(a) for a in sys.argv[1:]}
for path, name, version, named, record in list(folders()):
    if name in want and not (named and record):
        shutil.rmtree(path)
        print('removed the unfinished ' + path)
"""
)
