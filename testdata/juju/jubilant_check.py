"""Drive fixpoint's juju front with the real jubilant, as a charm's tests do.

Run by cmd/fixpoint's TestJujuFrontJubilant against an `up` of
testdata/juju's environment (kv: classic-kv x2, db and web related), with
the juju front first on PATH. Argument: the model's name. Each check
asserts what jubilant parsed; the script prints one line per check and
exits non-zero at the first that fails. Arguments: the model's name and
the classic-kv charm's directory, which it deploys again as kv2 and, in a
model of jubilant's temp_model (an environment added and destroyed), as
kvt beside that model's user secrets.
"""

import json
import sys

import jubilant

model, kv_charm = sys.argv[1], sys.argv[2]
juju = jubilant.Juju(model=model)


def check(what, cond, detail):
    if not cond:
        print(f'FAIL {what}: {detail!r}')
        sys.exit(1)
    print(f'ok {what}')


# Status, through Status._from_dict: apps, units, leaders, relations.
status = juju.wait(jubilant.all_active, timeout=300, delay=0.2, successes=2)
check('status apps', sorted(status.apps) == ['db', 'kv', 'web'], status.apps.keys())
check('status model', status.model.name == model and status.model.type == 'iaas' and status.model.version.startswith('3.6.'), status.model)
kv = status.apps['kv']
check('kv units', sorted(kv.units) == ['kv/0', 'kv/1'], kv.units.keys())
check('kv one leader', sum(u.leader for u in kv.units.values()) == 1, kv.units)
check('kv workload', all(u.workload_status.current == 'active' for u in kv.units.values()), kv.units)
check('kv agents idle', jubilant.all_agents_idle(status, 'kv'), kv.units)
check('kv charm', kv.charm_name == 'classic-kv' and kv.charm_origin == 'local' and kv.charm_rev == 0, kv)
check('kv app status', kv.app_status.current == 'active', kv.app_status)
check('web-db relation', [r.related_app for r in status.apps['web'].relations['db']] == ['db'], status.apps['web'].relations)
check('machines', all(m.juju_status.current == 'started' for m in status.machines.values()) and len(status.machines) >= 1, status.machines)
check('unit machine', kv.units['kv/0'].machine in status.machines, kv.units['kv/0'])

# Actions, through Task._from_dict: results, params, leader.
task = juju.run('kv/0', 'greet', {'greeting': 'hi', 'times': 2})
check('run results', task.status == 'completed' and task.results['greeting'] == {'text': 'hi', 'times': '2'} and task.return_code == 0, task)
check('run log', len(task.log) == 1 and task.log[0].endswith('greeting 2 times in greet (' + task.id + ')'), task.log)
task = juju.run('kv/leader', 'greet')
check('run on leader', task.results['unit'] in kv.units and kv.units[task.results['unit']].leader, task)
try:
    juju.run('kv/0', 'greet', {'fail': 'boom'})
    check('action-fail raises TaskError', False, 'no error')
except jubilant.TaskError as e:
    check('action-fail raises TaskError', e.task.status == 'failed' and e.task.message == 'boom', e.task)
try:
    juju.run('kv/0', 'no-such-action')
    check('unknown action raises ValueError', False, 'no error')
except ValueError as e:
    check('unknown action raises ValueError', '(not found)' in str(e), str(e))

# exec, through Task: stdout, and a failing command's TaskError.
task = juju.exec('echo "$JUJU_UNIT_NAME"', unit='kv/1')
check('exec stdout', task.stdout == 'kv/1\n' and task.return_code == 0, task)
try:
    juju.exec('echo out; exit 3', unit='kv/0')
    check('exec failure raises TaskError', False, 'no error')
except jubilant.TaskError as e:
    check('exec failure raises TaskError', e.task.return_code == 3 and e.task.stdout == 'out\n', e.task)

# show-unit, config, show-model, version, debug-log.
unit = juju.show_unit('web/0')
check('show-unit', unit.charm == 'local:classic-web-0' and unit.leader and [r.endpoint for r in unit.relation_info if r.related_endpoint == 'db'] == ['db'], unit)
rel = [r for r in unit.relation_info if r.endpoint == 'db'][0]
check('show-unit related units', list(rel.related_units) == ['db/0'], rel)
config = juju.config('db')
check('config', config['max_connections'] == 200 and config['port'] == 6379, config)
check('config trust', juju.config('db', app_config=True) == {'trust': False}, juju.config('db', app_config=True))
info = juju.show_model()
check('show-model', info.short_name == model and info.model_type == 'iaas' and len(info.model_uuid) == 36 and info.agent_version.startswith('3.6.'), info)
version = juju.version()
check('version', version.tuple[:2] == (3, 6), version)
log = juju.debug_log(limit=5)
check('debug-log', 0 < len(log.splitlines()) <= 5 and all(': ' in line for line in log.splitlines()), log)

# Edits by command: deploy, add-unit, config, remove-relation, integrate,
# remove-unit and remove-application, then wait as a charm's tests do.
juju.deploy(kv_charm, 'kv2')
juju.add_unit('kv2', num_units=2)
juju.config('db', {'max_connections': 300})
juju.remove_relation('web', 'db')
status = juju.wait(lambda s: 'db' not in s.apps['web'].relations, timeout=300, delay=0.2, successes=1)
check('remove-relation', 'web' not in [r.related_app for rs in status.apps['db'].relations.values() for r in rs], status.apps['db'].relations)
juju.integrate('web', 'db')
status = juju.wait(lambda s: jubilant.all_active(s) and len(s.apps['kv2'].units) == 3 and 'db' in s.apps['web'].relations, timeout=300, delay=0.2)
check('deploy and add-unit', sorted(status.apps['kv2'].units) == ['kv2/0', 'kv2/1', 'kv2/2'] and status.apps['kv2'].charm_name == 'classic-kv', status.apps['kv2'])
check('config set', juju.config('db')['max_connections'] == 300, juju.config('db'))
juju.remove_unit('kv2/2')
status = juju.wait(lambda s: sorted(s.apps['kv2'].units) == ['kv2/0', 'kv2/1'], timeout=300, delay=0.2, successes=1)
check('remove-unit', 'kv2/2' not in status.apps['kv2'].units, status.apps['kv2'].units)
juju.remove_application('kv2')
status = juju.wait(lambda s: 'kv2' not in s.apps, timeout=300, delay=0.2, successes=1)
check('remove-application', 'kv2' not in status.apps, status.apps.keys())

# Secrets, through Secret._from_dict and RevealedSecret: a charm's, with
# the times the control plane recorded.
juju.exec('secret-add --label thelabel some=content', unit='kv/0')
secrets = [s for s in juju.secrets() if s.label == 'thelabel']
check('secrets', len(secrets) == 1 and secrets[0].owner == 'kv' and secrets[0].revision == 1 and secrets[0].created.year >= 2024 and secrets[0].updated >= secrets[0].created, secrets)
shown = juju.show_secret(secrets[0].uri, reveal=True)
check('show-secret --reveal', shown.content == {'some': 'content'} and shown.uri == secrets[0].uri and shown.created == secrets[0].created, shown)
shown = juju.show_secret(secrets[0].uri.unique_identifier, revisions=True)
check('show-secret --revisions', [r.revision for r in shown.revisions] == [1] and shown.revisions[0].created.year >= 2024, shown.revisions)
juju.exec(f'secret-remove {secrets[0].uri}', unit='kv/0')

# Models, as jubilant's temp_model makes one: add-model with a random
# name, the model's own applications and user secrets, destroy-model at
# the end with its application still running.
with jubilant.temp_model() as tm:
    check('temp model', tm.model.startswith('jubilant-') and tm.show_model().short_name == tm.model, tm.model)
    tm.deploy(kv_charm, 'kvt', trust=True)
    st = tm.wait(jubilant.all_active, timeout=300, delay=0.2)
    check('temp model deploy', sorted(st.apps) == ['kvt'] and st.model.name == tm.model, st.apps.keys())
    cred = json.loads(tm.exec('credential-get --format json', unit='kvt/0').stdout)
    check('model credential', cred['type'] == 'manual' and cred['name'] == 'fixpoint' and cred['credential']['auth-type'] == 'empty', cred)
    uri = tm.add_secret('tpass', {'password': 'hunter2-xyzzy'}, info='a user secret')
    listed = tm.secrets()
    check('add-secret', [s.uri for s in listed] == [uri] and listed[0].owner == '<model>' and listed[0].name == 'tpass' and listed[0].description == 'a user secret', listed)
    tm.grant_secret('tpass', 'kvt')
    tm.update_secret(uri, {'password': 'second-xyzzy'})
    shown = tm.show_secret('tpass', reveal=True)
    check('update-secret', shown.revision == 2 and shown.content == {'password': 'second-xyzzy'} and shown.updated >= shown.created, shown)
    access = tm.show_secret('tpass').access
    check('grant-secret', [(a.target, a.role) for a in access] == [('application-kvt', 'view')], access)
    tm.cli('revoke-secret', 'tpass', 'kvt')
    check('revoke-secret', tm.show_secret('tpass').access is None, tm.show_secret('tpass'))
    tm.remove_secret(uri)
    check('remove-secret', tm.secrets() == [], tm.secrets())
    check('models', sorted(m['short-name'] for m in json.loads(juju.cli('models', '--format', 'json', include_model=False))['models']) == sorted([model, tm.model]), tm.model)
models = json.loads(juju.cli('models', '--format', 'json', include_model=False))['models']
check('destroy-model', [m['short-name'] for m in models] == [model], models)

# A model the control plane does not hold is refused, as Juju does.
try:
    jubilant.Juju(model='elsewhere').status()
    check('unknown model', False, 'no error')
except jubilant.CLIError as e:
    check('unknown model', e.returncode == 1 and e.stderr.startswith('ERROR model "elsewhere" not found'), e.stderr)
print('all checks passed')
