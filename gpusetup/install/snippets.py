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

# argv: → prints {"name": "version"} of every distribution (names normalised to lower-case, - for _).
LIST = """\
import json, importlib.metadata as md
out = {}
for d in md.distributions():
    n = (d.metadata['Name'] or '').lower().replace('_', '-')
    if n:
        out[n] = d.version
print(json.dumps(out, sort_keys=True))
"""

# argv: CONSTRAINTS_FILE (relative to the env's prefix) name ... → writes name==installed-version lines; also the env's pip.conf (when the
# env has none) so every later `pip install` in this env honours the constraints automatically.
PROTECT = (
    """\
import sys, os, importlib.metadata as md
path, names = os.path.join(sys.prefix, sys.argv[1]), sys.argv[2:]
lines = ['MARKER - keeps these exact builds; pip refuses to swap them for another build.']
for n in names:
    lines.append(f'{n}=={md.version(n)}')
with open(path, 'w', encoding='utf-8') as fh:
    fh.write('\\n'.join(lines) + '\\n')
conf = os.path.join(sys.prefix, 'pip.ini' if os.name == 'nt' else 'pip.conf')
if not os.path.exists(conf):
    with open(conf, 'w', encoding='utf-8') as fh:
        fh.write('MARKER\\n[install]\\nconstraint = ' + path + '\\n')
    print('Protected: ' + conf + ' makes pip in this environment honour ' + path)
else:
    print('This environment already has ' + conf + '; use: pip install -c ' + path + ' ...')
"""
).replace("MARKER", MARKER)

# argv: FILE (relative to the env's prefix) ... → removes each file only when gpusetup wrote it (first line is the marker).
REMOVE_OURS = (
    """\
import sys, os
for p in sys.argv[1:]:
    p = os.path.join(sys.prefix, p)
    try:
        with open(p, encoding='utf-8') as fh:
            first = fh.readline()
    except OSError:
        continue
    if first.startswith('MARKER'):
        os.remove(p)
        print('removed ' + p)
"""
).replace("MARKER", MARKER)

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

# argv: VENV_DIR → removes a virtual environment, and refuses anything that does not look like one.
RMTREE_VENV = """\
import sys, os, shutil
p = sys.argv[1]
if not os.path.exists(p):
    print('already gone: ' + p)
    sys.exit(0)
if not os.path.isfile(os.path.join(p, 'pyvenv.cfg')):
    print('refusing to delete ' + p + ': it is not a virtual environment (no pyvenv.cfg)', file=sys.stderr)
    sys.exit(1)
shutil.rmtree(p)
print('removed ' + p)
"""
