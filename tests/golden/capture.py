#!/usr/bin/env python3
"""Capture raw A2A wire traffic from the official Python and JS SDK agents.

Standard library only. Starts tests/interop/python/agent.py (a2a-sdk 1.3.0),
tests/interop/python03/agent.py (a2a-sdk 0.3.x) or tests/interop/js/agent.mjs
(@a2a-js/sdk 1.3.0, under node), performs scripted
exchanges on 127.0.0.1, and writes every response body byte-for-byte
(SSE bodies verbatim: CRLF line ends, keep-alive comments) into
tests/golden/<set>/, plus <set>/INDEX.json describing each file:
request (method, path, headers, body) and response (status, headers).

Usage:
  python3 tests/golden/capture.py            # all sets
  python3 tests/golden/capture.py py-1.3.0   # one set
  python3 tests/golden/capture.py py-0.3
  python3 tests/golden/capture.py js-1.3.0

The venvs are created by tests/interop/python{,03}/setup.sh when missing,
node_modules by tests/interop/js/setup.sh.
"""

from __future__ import annotations

import http.client as hc
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import threading
import time
import uuid

from pathlib import Path
from typing import Any, Callable

ROOT = Path(__file__).resolve().parents[2]
GOLDEN = ROOT / 'tests' / 'golden'
INTEROP = ROOT / 'tests' / 'interop'

SETS = {
    'py-1.3.0': {
        'setup': INTEROP / 'python' / 'setup.sh',
        'python': INTEROP / '.venv-py13' / 'bin' / 'python',
        'agent': INTEROP / 'python' / 'agent.py',
    },
    'py-0.3': {
        'setup': INTEROP / 'python03' / 'setup.sh',
        'python': INTEROP / '.venv-py03' / 'bin' / 'python',
        'agent': INTEROP / 'python03' / 'agent.py',
    },
    'js-1.3.0': {
        'setup': INTEROP / 'js' / 'setup.sh',
        # 'python' is the interpreter Agent runs the script with: here node.
        'python': Path(shutil.which('node') or 'node'),
        'agent': INTEROP / 'js' / 'agent.mjs',
        # setup.sh runs loudly when this is missing (see ensure_venv).
        'ready': INTEROP / 'js' / 'node_modules' / '@a2a-js' / 'sdk' / 'package.json',
    },
}

TIMEOUT = 40.0  # seconds; no single exchange should come near it
DROP_HEADERS = {'date'}  # volatile, useless for goldens

_agents: list['Agent'] = []


# --------------------------------------------------------------------------
# processes


class Agent:
    """One agent process; stopped by stop(), atexit, or a signal."""

    def __init__(self, python: Path, script: Path, *args: str) -> None:
        self.proc = subprocess.Popen(
            [str(python), str(script), '--port', '0', *args],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        _agents.append(self)
        self.stderr_lines: list[str] = []
        threading.Thread(target=self._drain_stderr, daemon=True).start()
        deadline = time.monotonic() + 30
        line = ''
        while time.monotonic() < deadline:
            line = self.proc.stdout.readline()  # type: ignore[union-attr]
            if line.startswith('READY '):
                break
            if not line and self.proc.poll() is not None:
                break
        if not line.startswith('READY '):
            self.stop()
            raise SystemExit(
                f'agent {script} did not start:\n' + ''.join(self.stderr_lines)
            )
        self.base = line.split()[1].strip()
        host_port = self.base.removeprefix('http://')
        self.host, port = host_port.split(':')
        self.port = int(port)

    def _drain_stderr(self) -> None:
        for line in self.proc.stderr:  # type: ignore[union-attr]
            self.stderr_lines.append(line)

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        if self in _agents:
            _agents.remove(self)


def _stop_all(*_: Any) -> None:
    for a in list(_agents):
        a.stop()


def _on_signal(signum: int, _frame: Any) -> None:
    _stop_all()
    sys.exit(128 + signum)


# --------------------------------------------------------------------------
# HTTP


class Response:
    def __init__(self, status: int, reason: str, headers: list[tuple[str, str]], body: bytes,
                 aborted: str | None = None):
        self.aborted = aborted  # set when the server broke the connection mid-body
        self.status = status
        self.reason = reason
        self.headers = headers
        self.body = body

    def json(self) -> Any:
        return json.loads(self.body)

    def header(self, name: str) -> str | None:
        for k, v in self.headers:
            if k.lower() == name.lower():
                return v
        return None


def _encode(body: Any) -> bytes | None:
    if body is None:
        return None
    if isinstance(body, bytes):
        return body
    return json.dumps(body).encode()


def http(agent: Agent, method: str, path: str, headers: dict[str, str],
         body: Any = None, on_event: Callable[[dict[str, Any], bytes], None] | None = None,
         max_seconds: float | None = None) -> Response:
    """One request. The body is read chunk by chunk; for SSE, on_event is
    called with each completed event (fields dict, raw bytes)."""
    conn = hc.HTTPConnection(agent.host, agent.port, timeout=TIMEOUT)
    try:
        conn.request(method, path, body=_encode(body), headers=headers)
        resp = conn.getresponse()
        raw = bytearray()
        pending = bytearray()
        started = time.monotonic()
        aborted = None
        while True:
            try:
                chunk = resp.read1(65536)
            except hc.IncompleteRead as e:
                raw += e.partial
                aborted = f'IncompleteRead: connection closed without the final chunk ({e!r})'
                break
            except (ConnectionError, TimeoutError) as e:
                aborted = f'{type(e).__name__}: {e}'
                break
            if not chunk:
                break
            raw += chunk
            if on_event is not None:
                pending += chunk
                for ev_raw in _split_events(pending):
                    on_event(_parse_event(ev_raw), ev_raw)
            if max_seconds is not None and time.monotonic() - started > max_seconds:
                break
        return Response(resp.status, resp.reason, resp.getheaders(), bytes(raw), aborted)
    finally:
        conn.close()


def _split_events(buf: bytearray) -> list[bytes]:
    """Pop complete SSE events (terminated by a blank line) off buf."""
    out = []
    while True:
        cut = None
        for sep in (b'\r\n\r\n', b'\n\n', b'\r\r'):
            i = buf.find(sep)
            if i >= 0 and (cut is None or i < cut[0]):
                cut = (i, len(sep))
        if cut is None:
            return out
        i, n = cut
        out.append(bytes(buf[: i + n]))
        del buf[: i + n]


def _parse_event(raw: bytes) -> dict[str, Any]:
    fields: dict[str, Any] = {'data': None, 'event': None, 'comments': []}
    data_lines = []
    for line in raw.decode().replace('\r\n', '\n').replace('\r', '\n').split('\n'):
        if not line:
            continue
        if line.startswith(':'):
            fields['comments'].append(line[1:].strip())
            continue
        name, _, value = line.partition(':')
        value = value.removeprefix(' ')
        if name == 'data':
            data_lines.append(value)
        elif name == 'event':
            fields['event'] = value
    if data_lines:
        try:
            fields['data'] = json.loads('\n'.join(data_lines))
        except ValueError:
            fields['data'] = '\n'.join(data_lines)
    return fields


# --------------------------------------------------------------------------
# recording


class Recorder:
    def __init__(self, name: str) -> None:
        self.dir = GOLDEN / name
        if self.dir.exists():
            shutil.rmtree(self.dir)
        self.dir.mkdir(parents=True)
        self.index: list[dict[str, Any]] = []
        self.lock = threading.Lock()

    def save(self, fname: str, method: str, path: str, req_headers: dict[str, str],
             req_body: Any, resp: Response, note: str) -> Response:
        (self.dir / fname).write_bytes(resp.body)
        if isinstance(req_body, bytes):
            try:
                req_repr: Any = req_body.decode()
            except UnicodeDecodeError:
                req_repr = repr(req_body)
        else:
            req_repr = req_body
        entry = {
            'file': fname,
            'note': note,
            'request': {
                'method': method,
                'path': path,
                'headers': req_headers,
                'body': req_repr,
            },
            'response': {
                'status': resp.status,
                'reason': resp.reason,
                'headers': [[k.lower(), v] for k, v in resp.headers
                            if k.lower() not in DROP_HEADERS],
                'bytes': len(resp.body),
            },
        }
        if resp.aborted:
            entry['response']['aborted'] = resp.aborted
        with self.lock:
            self.index.append(entry)
        print(f'  {resp.status} {fname} ({len(resp.body)} bytes)'
              + (' ABORTED' if resp.aborted else ''), flush=True)
        return resp

    def write_index(self) -> None:
        self.index.sort(key=lambda e: e['file'])
        (self.dir / 'INDEX.json').write_text(json.dumps(self.index, indent=2) + '\n')


def bg(fn: Callable[[], Any]) -> threading.Thread:
    errors: list[BaseException] = []

    def run() -> None:
        try:
            fn()
        except BaseException as e:  # noqa: BLE001
            errors.append(e)
            raise

    t = threading.Thread(target=run, daemon=True)
    t.errors = errors  # type: ignore[attr-defined]
    t.start()
    return t


def join(*threads: threading.Thread) -> None:
    for t in threads:
        t.join(TIMEOUT * 2)
        if t.is_alive():
            raise SystemExit('a capture thread hung')
        if t.errors:  # type: ignore[attr-defined]
            raise SystemExit(f'a capture thread failed: {t.errors[0]!r}')  # type: ignore[attr-defined]


def mid() -> str:
    return f'msg-{uuid.uuid4()}'


# --------------------------------------------------------------------------
# 1.0 (a2a-sdk 1.3.0)

V = {'A2A-Version': '1.0'}
RPC_PATH = '/a2a/jsonrpc'
REST = '/a2a/rest'


def user_msg(text: str, task_id: str | None = None, context_id: str | None = None) -> dict:
    m: dict[str, Any] = {'messageId': mid(), 'role': 'ROLE_USER', 'parts': [{'text': text}]}
    if task_id:
        m['taskId'] = task_id
    if context_id:
        m['contextId'] = context_id
    return m


class V1:
    """Exchanges against the 1.0 agent, JSON-RPC and REST."""

    def __init__(self, agent: Agent, rec: Recorder, token: str | None = None) -> None:
        self.a = agent
        self.rec = rec
        self.auth = {'Authorization': f'Bearer {token}'} if token else {}
        self.n = 0

    # -- JSON-RPC
    def rpc(self, fname: str | None, method: str, params: Any, note: str = '',
            headers: dict[str, str] | None = None, raw_body: bytes | None = None,
            on_event: Callable | None = None, stream: bool = False,
            max_seconds: float | None = None) -> Response:
        self.n += 1
        h = {**V, **self.auth, 'Content-Type': 'application/json'}
        if stream:
            h['Accept'] = 'text/event-stream'
        if headers is not None:
            h = {**headers}
        body: Any = raw_body if raw_body is not None else {
            'jsonrpc': '2.0', 'id': f'req-{self.n}', 'method': method, 'params': params}
        resp = http(self.a, 'POST', RPC_PATH, h, body, on_event=on_event, max_seconds=max_seconds)
        if fname:
            self.rec.save(fname, 'POST', RPC_PATH, h, body, resp, note or method)
        return resp

    # -- REST
    def rest(self, fname: str | None, method: str, path: str, body: Any = None,
             note: str = '', headers: dict[str, str] | None = None,
             on_event: Callable | None = None, stream: bool = False) -> Response:
        h = {**V, **self.auth}
        if body is not None:
            h['Content-Type'] = 'application/a2a+json'
        if stream:
            h['Accept'] = 'text/event-stream'
        if headers is not None:
            h = {**headers}
        full = REST + path
        resp = http(self.a, method, full, h, body, on_event=on_event)
        if fname:
            self.rec.save(fname, method, full, h, body, resp, note or f'{method} {path}')
        return resp

    def get(self, fname: str | None, method: str, path: str, note: str = '',
            headers: dict[str, str] | None = None) -> Response:
        h = {**V} if headers is None else headers
        resp = http(self.a, method, path, h, None)
        if fname:
            self.rec.save(fname, method, path, h, None, resp, note or f'{method} {path}')
        return resp


def _task_of(result: dict) -> dict:
    return result.get('task') or result


def _state_of(ev: dict, rest: bool) -> tuple[str | None, str | None]:
    """(kind, state) of a parsed SSE event's StreamResponse."""
    d = ev.get('data')
    if not isinstance(d, dict):
        return None, None
    sr = d if rest else d.get('result')
    if not isinstance(sr, dict):
        return ('error', None) if 'error' in d else (None, None)
    for kind in ('task', 'statusUpdate', 'artifactUpdate', 'message'):
        if kind in sr:
            st = sr[kind].get('status', {}).get('state') if kind in ('task', 'statusUpdate') else None
            return kind, st
    return None, None


def _first_task_id(resp: Response, rest: bool) -> tuple[str, str]:
    for raw in resp.body.replace(b'\r\n', b'\n').split(b'\n\n'):
        ev = _parse_event(raw)
        d = ev.get('data')
        if isinstance(d, dict):
            sr = d if rest else d.get('result', {})
            obj = sr.get('task') or sr.get('statusUpdate') or sr.get('artifactUpdate')
            if obj:
                return obj.get('id') or obj['taskId'], obj['contextId']
    raise SystemExit('no task id in stream')


def capture_v1(setcfg: dict) -> None:
    rec = Recorder('py-1.3.0')
    agent = Agent(setcfg['python'], setcfg['agent'], '--name', 'test-runner')
    try:
        run_v1_binding(agent, rec, rest=False)
        run_v1_binding(agent, rec, rest=True)
        run_v1_misc(agent, rec)
    finally:
        agent.stop()
    tok = 'interop-secret'
    agent = Agent(setcfg['python'], setcfg['agent'], '--name', 'deployer', '--token', tok)
    try:
        run_v1_auth(agent, rec, tok)
    finally:
        agent.stop()
    agent = Agent(setcfg['python'], setcfg['agent'], '--name', 'assistant', '--v03-compat')
    try:
        run_v1_compat(agent, rec)
    finally:
        agent.stop()
    rec.write_index()


def run_v1_compat(agent: Agent, rec: Recorder) -> None:
    """The 1.3.0 agent with the SDK's 0.3 adapter on: hybrid card, 0.3 methods."""
    print(f'{rec.dir.name} compat', flush=True)
    c = V1(agent, rec)
    c.get('compat-card.json', 'GET', '/.well-known/agent-card.json',
          'hybrid card: 1.0 card + a 0.3 interface, SDK merges 0.3 top-level fields')
    c.get('compat-card-no-version.json', 'GET', '/.well-known/agent-card.json',
          'hybrid card without A2A-Version (same body)', headers={})
    h03 = {'Content-Type': 'application/json'}
    m03 = {'kind': 'message', 'messageId': mid(), 'role': 'user',
           'parts': [{'kind': 'text', 'text': 'run tests'}]}
    r = c.rpc('compat-jsonrpc03-message-send.json', 'message/send', {'message': m03},
              '0.3 message/send without A2A-Version through the 1.3.0 compat adapter', headers=h03)
    t = r.json().get('result', {})
    c.rpc('compat-jsonrpc03-message-stream.sse', 'message/stream',
          {'message': {**m03, 'messageId': mid()}},
          '0.3 message/stream through the compat adapter',
          headers={**h03, 'Accept': 'text/event-stream'})
    if t.get('id'):
        c.rpc('compat-jsonrpc03-tasks-get.json', 'tasks/get', {'id': t['id']},
              '0.3 tasks/get through the compat adapter', headers=h03)
    c.rpc('compat-jsonrpc10-send.json', 'SendMessage', {'message': user_msg('run tests')},
          '1.0 SendMessage (A2A-Version: 1.0) on the same endpoint')
    c.rest('compat-rest03-get-task.json', 'GET', f'/v1/tasks/{t.get("id", "x")}', None,
           '0.3 REST GET /v1/tasks/{id} (compat adapter, no A2A-Version)', headers={})


def run_v1_misc(agent: Agent, rec: Recorder) -> None:
    c = V1(agent, rec)
    card = c.get('card.json', 'GET', '/.well-known/agent-card.json', 'agent card, A2A-Version: 1.0')
    c.get('card-no-version.json', 'GET', '/.well-known/agent-card.json',
          'agent card without A2A-Version (the card route does not check it)', headers={})
    etag = card.header('etag') or ''
    c.get('card-not-modified.empty', 'GET', '/.well-known/agent-card.json',
          'If-None-Match with the card ETag -> 304, empty body',
          headers={**V, 'If-None-Match': etag})
    # Out-of-band approval route for an unknown task (not A2A).
    c.get('approve-unknown.json', 'POST', '/approve/no-such-task',
          'custom approval route (not A2A), unknown task -> 404', headers={})


def run_v1_binding(agent: Agent, rec: Recorder, rest: bool) -> None:
    c = V1(agent, rec)
    p = 'rest' if rest else 'jsonrpc'
    print(f'{rec.dir.name} {p}', flush=True)
    threads: list[threading.Thread] = []

    def send(fname, text, note, blocking=True, task_id=None, context_id=None, extra=None):
        params: dict[str, Any] = {'message': user_msg(text, task_id, context_id)}
        if not blocking:
            params['configuration'] = {'returnImmediately': True}
        if extra:
            params.update(extra)
        if rest:
            r = c.rest(fname, 'POST', '/message:send', params, note)
            return r, (r.json() if r.status == 200 else None)
        r = c.rpc(fname, 'SendMessage', params, note)
        j = r.json()
        return r, j.get('result')

    def stream(fname, text, note, task_id=None, context_id=None, on_event=None):
        params = {'message': user_msg(text, task_id, context_id)}
        if rest:
            return c.rest(fname, 'POST', '/message:stream', params, note, stream=True,
                          on_event=on_event)
        return c.rpc(fname, 'SendStreamingMessage', params, note, stream=True,
                     on_event=on_event)

    def subscribe(fname, task_id, note, on_event=None, verb='POST', max_seconds=None):
        if rest:
            return c.rest(fname, verb, f'/tasks/{task_id}:subscribe', None, note,
                          stream=True, on_event=on_event)
        return c.rpc(fname, 'SubscribeToTask', {'id': task_id}, note, stream=True,
                     on_event=on_event, max_seconds=max_seconds)

    def get_task(fname, task_id, note, history=None):
        if rest:
            q = f'?historyLength={history}' if history is not None else ''
            return c.rest(fname, 'GET', f'/tasks/{task_id}{q}', None, note)
        params: dict[str, Any] = {'id': task_id}
        if history is not None:
            params['historyLength'] = history
        return c.rpc(fname, 'GetTask', params, note)

    def cancel(fname, task_id, note):
        if rest:
            return c.rest(fname, 'POST', f'/tasks/{task_id}:cancel', {}, note)
        return c.rpc(fname, 'CancelTask', {'id': task_id}, note)

    def list_tasks(fname, note, **q):
        if rest:
            qs = '&'.join(f'{k}={str(v).lower() if isinstance(v, bool) else v}'
                          for k, v in q.items())
            return c.rest(fname, 'GET', '/tasks' + (f'?{qs}' if qs else ''), None, note)
        return c.rpc(fname, 'ListTasks', q, note)

    # 1. blocking send of the default run
    _, res = send(f'{p}-send-blocking.json', 'run tests',
                  'SendMessage "run tests", blocking (default) -> COMPLETED task')
    run_task = _task_of(res)
    # 2. message-only reply
    send(f'{p}-send-message.json', 'hello', 'SendMessage "hello" -> {"message": ...}, no task')
    # 3. blocking send that stops at INPUT_REQUIRED, then the blocking reply
    _, res = send(f'{p}-send-input-required.json', 'question: review the payments-api diff',
                  'SendMessage "question ..." blocking -> returns at INPUT_REQUIRED')
    q = _task_of(res)
    send(f'{p}-send-reply.json', 'main',
         'SendMessage reply "main" with taskId+contextId of the INPUT_REQUIRED task -> COMPLETED',
         task_id=q['id'], context_id=q['contextId'])
    # 4. streams
    stream(f'{p}-stream-run.sse', 'run tests', 'SendStreamingMessage "run tests"')
    stream(f'{p}-stream-fail.sse', 'run tests, fail please', 'SendStreamingMessage "... fail ..." -> FAILED')
    r = stream(f'{p}-stream-crash.sse', 'crash', 'SendStreamingMessage "crash": the executor raises mid-stream')
    crashed, _ = _first_task_id(r, rest)
    time.sleep(0.2)
    get_task(f'{p}-get-task-crashed.json', crashed, 'GetTask on the task whose executor raised')
    stream(f'{p}-stream-reject.sse', 'reject this', 'SendStreamingMessage "reject" -> REJECTED')
    stream(f'{p}-stream-message.sse', 'hello', 'SendStreamingMessage "hello" -> one message event')
    r = stream(f'{p}-stream-question.sse', 'question: review the payments-api diff',
               'SendStreamingMessage "question ..." -> stream ends at INPUT_REQUIRED')
    tid, cid = _first_task_id(r, rest)
    stream(f'{p}-stream-reply.sse', 'release/2026.10',
           'SendStreamingMessage reply "release/2026.10" (same taskId/contextId) -> WORKING..COMPLETED',
           task_id=tid, context_id=cid)

    # 5. out-of-band approval while the stream stays open
    approve_done = threading.Event()

    def on_approve_event(ev, _raw):
        kind, st = _state_of(ev, rest)
        if st == 'TASK_STATE_AUTH_REQUIRED' and not approve_done.is_set():
            approve_done.set()
            d = ev['data'] if rest else ev['data']['result']
            task_id = d['statusUpdate']['taskId']

            def do_approve():
                time.sleep(0.3)
                c.get(f'{p}-approve-response.json', 'POST', f'/approve/{task_id}',
                      'custom approval route (not A2A) -> resumes the AUTH_REQUIRED task',
                      headers={})
            threads.append(bg(do_approve))

    stream(f'{p}-stream-approve.sse', 'deploy 2026.10.06-1 to staging, approve first',
           'SendStreamingMessage "approve": AUTH_REQUIRED, then POST /approve/<id> out of band; '
           'the same stream carries WORKING..COMPLETED', on_event=on_approve_event)
    join(*threads)
    threads.clear()

    # 6. subscribe to a slow run mid-way
    _, res = send(f'{p}-send-return-immediately.json', 'run tests slow',
                  'SendMessage "run tests slow" with returnImmediately:true -> SUBMITTED/WORKING task',
                  blocking=False)
    slow = _task_of(res)
    time.sleep(2.2)
    subscribe(f'{p}-subscribe-running.sse', slow['id'],
              'SubscribeToTask on the slow run ~2 s in: Task snapshot, then the rest of the run')
    if rest:
        _, res = send(None, 'run tests slow', '', blocking=False)
        slow2 = _task_of(res)
        time.sleep(2.2)
        subscribe('rest-subscribe-get.sse', slow2['id'],
                  'GET /tasks/{id}:subscribe (the proto verb) on a slow run', verb='GET')

    # 7. subscribe to an INPUT_REQUIRED task, then answer it: the subscription carries the next turn
    _, res = send(None, 'question: review the payments-api diff', '')
    q2 = _task_of(res)
    replied = threading.Event()

    def on_sub_event(ev, _raw):
        if not replied.is_set():
            replied.set()

            def do_reply():
                time.sleep(0.3)
                send(None, 'main', '', task_id=q2['id'], context_id=q2['contextId'])
            threads.append(bg(do_reply))

    subscribe(f'{p}-subscribe-input-required.sse', q2['id'],
              'SubscribeToTask on an INPUT_REQUIRED task; a SendMessage reply arrives meanwhile',
              on_event=on_sub_event)
    join(*threads)
    threads.clear()

    # 8. a waiting task: subscribe, GetTask while WORKING, cancel; the subscriber sees CANCELED
    _, res = send(None, 'wait for a runner', '', blocking=False)
    w = _task_of(res)
    time.sleep(0.3)
    canceled = threading.Event()

    def on_wait_event(ev, _raw):
        if not canceled.is_set():
            canceled.set()

            def do_cancel():
                time.sleep(0.3)
                get_task(f'{p}-get-task-working.json', w['id'], 'GetTask on a WORKING task')
                cancel(f'{p}-cancel.json', w['id'], 'CancelTask on a WORKING task -> CANCELED task')
            threads.append(bg(do_cancel))

    subscribe(f'{p}-subscribe-canceled.sse', w['id'],
              'SubscribeToTask on a WORKING task that is then canceled', on_event=on_wait_event)
    join(*threads)
    threads.clear()

    # 9. reads
    get_task(f'{p}-get-task.json', run_task['id'], 'GetTask on the completed blocking run')
    get_task(f'{p}-get-task-history1.json', run_task['id'], 'GetTask historyLength=1', history=1)
    get_task(f'{p}-get-task-history0.json', run_task['id'], 'GetTask historyLength=0', history=0)
    r = list_tasks(f'{p}-list-tasks.json', 'ListTasks pageSize=2', pageSize=2)
    body = r.json()
    tok = (body if rest else body.get('result', {})).get('nextPageToken')
    if tok:
        list_tasks(f'{p}-list-tasks-page2.json', 'ListTasks pageSize=2 with the nextPageToken',
                   pageSize=2, pageToken=tok)
    list_tasks(f'{p}-list-tasks-context.json',
               'ListTasks contextId=<blocking run> includeArtifacts=true',
               contextId=run_task['contextId'], includeArtifacts=True)
    list_tasks(f'{p}-list-tasks-canceled.json', 'ListTasks status=TASK_STATE_CANCELED historyLength=0',
               status='TASK_STATE_CANCELED', historyLength=0)

    # 10. errors
    bogus = '00000000-0000-0000-0000-000000000000'
    get_task(f'{p}-error-task-not-found.json', bogus, 'GetTask unknown id -> TaskNotFound')
    cancel(f'{p}-error-cancel-not-found.json', bogus, 'CancelTask unknown id -> TaskNotFound')
    cancel(f'{p}-error-cancel-terminal.json', run_task['id'],
           'CancelTask on a COMPLETED task -> TaskNotCancelable')
    cancel(f'{p}-error-cancel-canceled.json', w['id'],
           'CancelTask on an already CANCELED task -> TaskNotCancelable')
    subscribe(f'{p}-error-subscribe-terminal.json', run_task['id'],
              'SubscribeToTask on a COMPLETED task -> UnsupportedOperation, plain JSON before any stream')
    subscribe(f'{p}-error-subscribe-not-found.json', bogus, 'SubscribeToTask unknown id')
    send(f'{p}-error-send-terminal.json', 'again', 'SendMessage on a COMPLETED task',
         task_id=run_task['id'], context_id=run_task['contextId'])
    send(f'{p}-error-send-wrong-context.json', 'main', 'SendMessage with a taskId and a wrong contextId',
         task_id=run_task['id'], context_id='wrong-context')
    list_tasks(f'{p}-error-list-page-size-0.json', 'ListTasks pageSize=0', pageSize=0)
    bad_role = {'message': {'messageId': mid(), 'role': 'user', 'parts': [{'text': 'run tests'}]}}
    no_version = {'Content-Type': 'application/json' if not rest else 'application/a2a+json'}
    if rest:
        c.rest(f'{p}-error-no-version.json', 'POST', '/message:send',
               {'message': user_msg('run tests')}, 'POST /message:send without A2A-Version',
               headers=no_version)
        c.rest(f'{p}-error-get-no-version.json', 'GET', f'/tasks/{run_task["id"]}', None,
               'GET /tasks/{id} without A2A-Version', headers={})
        c.rest(f'{p}-error-stream-no-version.json', 'POST', '/message:stream',
               {'message': user_msg('run tests')}, 'POST /message:stream without A2A-Version',
               headers={**no_version, 'Accept': 'text/event-stream'})
        c.rest(f'{p}-error-invalid-params.json', 'POST', '/message:send', bad_role,
               'POST /message:send with 0.3 role "user"')
        c.rest(f'{p}-error-bad-json.json', 'POST', '/message:send', b'{"message": ',
               'POST /message:send with a truncated JSON body')
        c.rest(f'{p}-error-unknown-path.txt', 'GET', '/no/such/path', None, 'GET unknown REST path')
        c.rest(f'{p}-error-v1-prefix.txt', 'GET', f'/v1/tasks/{run_task["id"]}', None,
               '0.3-style /v1/ prefix (not mounted without the 0.3 adapter)')
        c.rest(f'{p}-error-version-query.json', 'GET', f'/tasks/{run_task["id"]}?A2A-Version=1.0',
               None, 'A2A-Version as a query parameter instead of the header', headers={})
    else:
        c.rpc(f'{p}-error-no-version.json', 'SendMessage', {'message': user_msg('run tests')},
              'SendMessage without A2A-Version', headers=no_version)
        c.rpc(f'{p}-error-stream-no-version.json', 'SendStreamingMessage',
              {'message': user_msg('run tests')}, 'SendStreamingMessage without A2A-Version',
              headers={**no_version, 'Accept': 'text/event-stream'})
        c.rpc(f'{p}-error-version-2.json', 'GetTask', {'id': run_task['id']},
              'GetTask with A2A-Version: 2.0',
              headers={'A2A-Version': '2.0', 'Content-Type': 'application/json'})
        c.rpc(f'{p}-error-invalid-params.json', 'SendMessage', bad_role,
              'SendMessage with 0.3 role "user"')
        c.rpc(f'{p}-error-method-not-found.json', 'message/send',
              {'message': {'kind': 'message', 'messageId': mid(), 'role': 'user',
                           'parts': [{'kind': 'text', 'text': 'run tests'}]}},
              '0.3 method name message/send (0.3 adapter off)')
        c.rpc(f'{p}-error-parse.json', '', None, 'truncated JSON body',
              raw_body=b'{"jsonrpc": "2.0", "id": "x", "method": ')
        c.rpc(f'{p}-error-invalid-request.json', '', None, 'JSON without "jsonrpc"/"method"',
              raw_body=b'{"id": "x", "params": {}}')
        c.rpc(f'{p}-error-batch.json', '', None, 'JSON-RPC batch (array)',
              raw_body=json.dumps([{'jsonrpc': '2.0', 'id': 'b1', 'method': 'GetTask',
                                    'params': {'id': run_task['id']}}]).encode())
        c.rpc(f'{p}-error-id-0.json', '', None, 'GetTask unknown id with "id": 0 (numeric zero)',
              raw_body=json.dumps({'jsonrpc': '2.0', 'id': 0, 'method': 'GetTask',
                                   'params': {'id': bogus}}).encode())
        c.rpc(f'{p}-error-push-not-supported.json', 'CreateTaskPushNotificationConfig',
              {'taskId': run_task['id'], 'url': 'http://127.0.0.1:9/hook'},
              'CreateTaskPushNotificationConfig with pushNotifications off')
        c.rpc(f'{p}-error-extended-card.json', 'GetExtendedAgentCard', {},
              'GetExtendedAgentCard with extendedAgentCard off')
        # keep-alive: a quiet subscription held 16 s shows the `: ping` comment
        _, res = send(None, 'wait for a runner', '', blocking=False)
        w2 = _task_of(res)

        def later_cancel():
            time.sleep(16.5)
            cancel(None, w2['id'], '')
        t = bg(later_cancel)
        subscribe(f'{p}-subscribe-keepalive.sse', w2['id'],
                  'SubscribeToTask on a quiet WORKING task for ~16 s (keep-alive ping), then CancelTask')
        join(t)


def run_v1_auth(agent: Agent, rec: Recorder, tok: str) -> None:
    print(f'{rec.dir.name} auth', flush=True)
    anon = V1(agent, rec)
    authed = V1(agent, rec, token=tok)
    anon.get('auth-card.json', 'GET', '/.well-known/agent-card.json',
             'card of an agent started with --token (public; declares securitySchemes)')
    send = {'message': user_msg('deploy 2026.10.06-1 to staging, approve first')}
    anon.rpc('auth-401-jsonrpc.json', 'SendMessage', send,
             'SendMessage without Authorization -> 401 from the middleware, not the SDK')
    anon.rpc('auth-401-jsonrpc-wrong-token.json', 'SendMessage', send,
             'SendMessage with a wrong bearer token -> 401',
             headers={**V, 'Content-Type': 'application/json', 'Authorization': 'Bearer nope'})
    anon.rest('auth-401-rest.json', 'GET', '/tasks', None, 'GET /tasks without Authorization -> 401')
    r = authed.rpc('auth-jsonrpc-send-auth-required.json', 'SendMessage',
                   {'message': user_msg('deploy 2026.10.06-1 to staging, approve first')},
                   'SendMessage with the token, "approve": blocking call returns at AUTH_REQUIRED')
    task = r.json()['result']['task']
    authed.rpc('auth-jsonrpc-list-tasks.json', 'ListTasks', {'historyLength': 0},
               'ListTasks with the token (tasks scoped to the authenticated user)')
    authed.get('auth-approve-response.json', 'POST', f'/approve/{task["id"]}',
               'approval route (public) resumes the task', headers={})
    time.sleep(0.5)
    authed.rpc('auth-jsonrpc-get-task-approved.json', 'GetTask', {'id': task['id'], 'historyLength': 0},
               'GetTask after approval -> COMPLETED')


# --------------------------------------------------------------------------
# 0.3 (a2a-sdk 0.3.x), JSON-RPC only


def capture_v03(setcfg: dict) -> None:
    rec = Recorder('py-0.3')
    agent = Agent(setcfg['python'], setcfg['agent'], '--name', 'test-runner')
    try:
        run_v03(agent, rec)
    finally:
        agent.stop()
    rec.write_index()


def run_v03(agent: Agent, rec: Recorder) -> None:
    print(f'{rec.dir.name} jsonrpc', flush=True)
    n = [0]
    threads: list[threading.Thread] = []

    def get(fname, path, note, headers=None):
        h = headers if headers is not None else {}
        resp = http(agent, 'GET', path, h, None)
        rec.save(fname, 'GET', path, h, None, resp, note)
        return resp

    def rpc(fname, method, params, note, stream=False, raw_body=None, on_event=None):
        n[0] += 1
        h = {'Content-Type': 'application/json'}
        if stream:
            h['Accept'] = 'text/event-stream'
        body: Any = raw_body if raw_body is not None else {
            'jsonrpc': '2.0', 'id': n[0], 'method': method, 'params': params}
        resp = http(agent, 'POST', '/', h, body, on_event=on_event)
        if fname:
            rec.save(fname, 'POST', '/', h, body, resp, note)
        return resp

    def msg(text, task_id=None, context_id=None):
        m: dict[str, Any] = {'kind': 'message', 'messageId': mid(), 'role': 'user',
                             'parts': [{'kind': 'text', 'text': text}]}
        if task_id:
            m['taskId'] = task_id
        if context_id:
            m['contextId'] = context_id
        return m

    get('card.json', '/.well-known/agent-card.json', 'agent card (0.3 shape)')
    get('card-legacy-agent-json.json', '/.well-known/agent.json', 'legacy 0.2 card path')
    r = rpc('message-send-blocking.json', 'message/send', {'message': msg('run tests')},
            'message/send "run tests" (blocking) -> completed Task with kind')
    run_task = r.json()['result']
    rpc('message-send-message.json', 'message/send', {'message': msg('hello')},
        'message/send "hello" -> a Message result')
    r = rpc('message-send-input-required.json', 'message/send',
            {'message': msg('question: review the payments-api diff')},
            'message/send "question" -> input-required Task')
    q = r.json()['result']
    rpc('message-send-reply.json', 'message/send',
        {'message': msg('main', q['id'], q['contextId'])}, 'message/send reply "main" -> completed')
    rpc('message-send-nonblocking.json', 'message/send',
        {'message': msg('run tests'), 'configuration': {'blocking': False}},
        'message/send with configuration.blocking=false')
    rpc('message-stream-run.sse', 'message/stream', {'message': msg('run tests')},
        'message/stream "run tests"', stream=True)
    rpc('message-stream-message.sse', 'message/stream', {'message': msg('hello')},
        'message/stream "hello" -> one Message', stream=True)
    r = rpc('message-stream-crash.sse', 'message/stream', {'message': msg('crash')},
            'message/stream "crash": the executor raises mid-stream', stream=True)
    first = _parse_event(r.body.replace(b'\r\n', b'\n').split(b'\n\n')[0]).get('data') or {}
    if isinstance(first, dict) and first.get('result', {}).get('id'):
        time.sleep(0.2)
        rpc('tasks-get-crashed.json', 'tasks/get', {'id': first['result']['id']},
            'tasks/get on the task whose executor raised')
    rpc('message-stream-fail.sse', 'message/stream', {'message': msg('run tests, fail please')},
        'message/stream "fail" -> failed', stream=True)
    r = rpc('message-stream-question.sse', 'message/stream',
            {'message': msg('question: review the payments-api diff')},
            'message/stream "question" -> input-required, final:true', stream=True)
    tid, cid = None, None
    for raw in r.body.replace(b'\r\n', b'\n').split(b'\n\n'):
        d = _parse_event(raw).get('data')
        if isinstance(d, dict) and 'result' in d:
            res = d['result']
            tid = res.get('taskId') or res.get('id')
            cid = res.get('contextId')
            break
    rpc('message-stream-reply.sse', 'message/stream', {'message': msg('release/2026.10', tid, cid)},
        'message/stream reply (same taskId/contextId)', stream=True)

    approved = threading.Event()

    def on_auth(ev, _raw):
        d = ev.get('data')
        if not isinstance(d, dict):
            return
        res = d.get('result', {})
        if res.get('kind') == 'status-update' and res['status']['state'] == 'auth-required' \
                and not approved.is_set():
            approved.set()
            task_id = res['taskId']

            def do():
                time.sleep(0.3)
                resp = http(agent, 'POST', f'/approve/{task_id}', {}, None)
                rec.save('approve-response.json', 'POST', f'/approve/{task_id}', {}, None, resp,
                         'custom approval route (not A2A)')
            threads.append(bg(do))

    rpc('message-stream-approve.sse', 'message/stream',
        {'message': msg('deploy 2026.10.06-1 to staging, approve first')},
        'message/stream "approve": auth-required, POST /approve/<id>, then completed',
        stream=True, on_event=on_auth)
    join(*threads)
    threads.clear()

    # resubscribe to a slow task mid-run
    r = rpc(None, 'message/send', {'message': msg('run tests slow'), 'configuration': {'blocking': False}}, '')
    slow = r.json()['result']
    time.sleep(2.2)
    rpc('tasks-resubscribe-running.sse', 'tasks/resubscribe', {'id': slow['id']},
        'tasks/resubscribe on a slow run ~2 s in', stream=True)

    rpc('tasks-get.json', 'tasks/get', {'id': run_task['id']}, 'tasks/get on the completed run')
    rpc('tasks-get-history1.json', 'tasks/get', {'id': run_task['id'], 'historyLength': 1},
        'tasks/get historyLength=1')
    r = rpc(None, 'message/send', {'message': msg('wait for a runner'), 'configuration': {'blocking': False}}, '')
    w = r.json()['result']
    time.sleep(0.3)
    rpc('tasks-get-working.json', 'tasks/get', {'id': w['id']}, 'tasks/get on a working task')
    rpc('tasks-cancel.json', 'tasks/cancel', {'id': w['id']}, 'tasks/cancel on a working task')

    bogus = '00000000-0000-0000-0000-000000000000'
    rpc('error-task-not-found.json', 'tasks/get', {'id': bogus}, 'tasks/get unknown id')
    rpc('error-cancel-terminal.json', 'tasks/cancel', {'id': run_task['id']},
        'tasks/cancel on a completed task')
    rpc('error-resubscribe-terminal.sse', 'tasks/resubscribe', {'id': run_task['id']},
        'tasks/resubscribe on a completed task: an SSE stream with one error frame', stream=True)
    rpc('error-method-not-found.json', 'SendMessage',
        {'message': {'messageId': mid(), 'role': 'ROLE_USER', 'parts': [{'text': 'run tests'}]}},
        '1.0 method name SendMessage on a 0.3 server')
    rpc('error-tasks-list.json', 'tasks/list', {}, 'tasks/list (not in 0.3.0)')
    rpc('error-invalid-params.json', 'message/send',
        {'message': {'messageId': mid(), 'role': 'ROLE_USER', 'parts': [{'text': 'run tests'}]}},
        'message/send with a 1.0-shaped message (role ROLE_USER, no kind)')
    rpc('error-parse.json', '', None, 'truncated JSON body', raw_body=b'{"jsonrpc": "2.0", "id": 1, ')
    rpc('error-send-terminal.json', 'message/send',
        {'message': msg('again', run_task['id'], run_task['contextId'])},
        'message/send on a completed task')


# --------------------------------------------------------------------------
# 1.0 (@a2a-js/sdk 1.3.0): the py-1.3.0 exchanges against tests/interop/js/agent.mjs,
# plus a few that show where the JS server differs


def _ext_for(resp: Response) -> str:
    if not resp.body:
        return '.empty'
    ct = (resp.header('content-type') or '').lower()
    if 'event-stream' in ct:
        return '.sse'
    if 'json' in ct:
        return '.json'
    return '.txt'


class JsRecorder(Recorder):
    """Recorder for js-1.3.0. The py-1.3.0 scripts run unchanged, so file names
    stay comparable across sets; notes that describe Python behaviour are replaced
    from `notes`, and the extension follows what the JS server answered
    (`rest-error-v1-prefix` is JSON there, not text)."""

    def __init__(self, name: str, notes: dict[str, str]) -> None:
        super().__init__(name)
        self.notes = notes

    def save(self, fname: str, method: str, path: str, req_headers: dict[str, str],
             req_body: Any, resp: Response, note: str) -> Response:
        note = self.notes.get(fname, note)
        stem, _, ext = fname.rpartition('.')
        want = _ext_for(resp)
        if stem and '.' + ext != want:
            fname = stem + want
        return super().save(fname, method, path, req_headers, req_body, resp, note)


def _js_notes() -> dict[str, str]:
    notes = {
        'card-no-version.json':
            'agent card without A2A-Version (without the 0.3 adapter the card route does not check it)',
        'compat-card.json':
            'card with A2A-Version: 1.0 on an agent with the 0.3 adapter: the plain 1.0 card '
            '(+ Vary: A2A-Version), no merged 0.3 fields',
        'compat-card-no-version.json':
            'card without A2A-Version on an agent with the 0.3 adapter: a 0.3-shaped card '
            '(url, preferredTransport, additionalInterfaces) that also embeds supportedInterfaces',
        'compat-jsonrpc03-message-send.json':
            '0.3 message/send without A2A-Version through the JS 0.3 adapter',
        'jsonrpc-subscribe-keepalive.sse':
            'SubscribeToTask on a quiet WORKING task for ~16 s, then CancelTask: JS sends no '
            'keep-alive comment at all, only the snapshot and, 16 s later, CANCELED',
    }
    for p in ('jsonrpc', 'rest'):
        notes.update({
            f'{p}-error-cancel-canceled.json':
                'CancelTask on an already CANCELED task -> JS returns the task again (no error)',
            f'{p}-stream-crash.sse':
                'SendStreamingMessage "crash": the executor throws mid-stream -> JS publishes a '
                'synthesized FAILED status ("Agent execution error: ..."), no error event',
            f'{p}-stream-reply.sse':
                'SendStreamingMessage reply "release/2026.10" (same taskId/contextId): starts with a '
                'task snapshot still INPUT_REQUIRED, then WORKING..COMPLETED',
            f'{p}-subscribe-input-required.sse':
                'SubscribeToTask on an INPUT_REQUIRED task; a SendMessage reply arrives meanwhile: '
                'snapshot, the reply turn\'s stale INPUT_REQUIRED task event, WORKING..COMPLETED',
            f'{p}-error-send-wrong-context.json':
                'SendMessage with a taskId of a COMPLETED task and a wrong contextId: JS checks the '
                'state first -> UnsupportedOperation (see *-wrong-context-live for -32602)',
            f'{p}-error-send-terminal.json':
                'SendMessage on a COMPLETED task -> UnsupportedOperation, state as a number in the message',
            f'{p}-error-subscribe-terminal.json':
                'SubscribeToTask on a COMPLETED task -> UnsupportedOperation before any stream '
                '(state as a number in the message)',
            f'{p}-error-invalid-params.json':
                'SendMessage with 0.3 role "user": JS accepts it (stored as role "UNRECOGNIZED") and '
                'runs the task -> 200',
        })
    notes.update({
        'rest-error-unknown-path.txt': 'GET unknown REST path -> express\'s HTML 404',
        'rest-error-v1-prefix.txt':
            '0.3-style /v1/ prefix without the 0.3 adapter: matched as tenant "v1" '
            '(/{tenant}/tasks/{id}) -> TaskNotFound JSON',
    })
    return notes


def capture_js(setcfg: dict) -> None:
    rec = JsRecorder('js-1.3.0', _js_notes())
    agent = Agent(setcfg['python'], setcfg['agent'], '--name', 'test-runner')
    try:
        run_v1_binding(agent, rec, rest=False)
        run_v1_binding(agent, rec, rest=True)
        run_v1_misc(agent, rec)
        run_js_extras(agent, rec, rest=False)
        run_js_extras(agent, rec, rest=True)
    finally:
        agent.stop()
    tok = 'interop-secret'
    agent = Agent(setcfg['python'], setcfg['agent'], '--name', 'deployer', '--token', tok)
    try:
        run_v1_auth(agent, rec, tok)
    finally:
        agent.stop()
    agent = Agent(setcfg['python'], setcfg['agent'], '--name', 'assistant', '--v03-compat')
    try:
        run_v1_compat(agent, rec)
        run_js_compat_extras(agent, rec)
    finally:
        agent.stop()
    rec.write_index()


def run_js_extras(agent: Agent, rec: Recorder, rest: bool) -> None:
    """Exchanges that only the JS set has: where @a2a-js/sdk behaves differently."""
    c = V1(agent, rec)
    p = 'rest' if rest else 'jsonrpc'
    print(f'{rec.dir.name} {p} (JS extras)', flush=True)
    bogus = '00000000-0000-0000-0000-000000000000'
    threads: list[threading.Thread] = []

    def send(fname, text, note, task_id=None, context_id=None):
        params = {'message': user_msg(text, task_id, context_id)}
        if rest:
            r = c.rest(fname, 'POST', '/message:send', params, note)
            return r, (r.json() if r.status == 200 else None)
        r = c.rpc(fname, 'SendMessage', params, note)
        return r, r.json().get('result')

    def stream(fname, text, note, on_event=None):
        params = {'message': user_msg(text)}
        if rest:
            return c.rest(fname, 'POST', '/message:stream', params, note, stream=True,
                          on_event=on_event)
        return c.rpc(fname, 'SendStreamingMessage', params, note, stream=True, on_event=on_event)

    # A wrong contextId on a live task is -32602 / 400 (on a terminal task JS says -32004 first).
    _, res = send(None, 'question: review the payments-api diff', '')
    q = _task_of(res)
    send(f'{p}-error-send-wrong-context-live.json', 'main',
         'SendMessage with the taskId of an INPUT_REQUIRED task and a wrong contextId',
         task_id=q['id'], context_id='wrong-context')
    send(None, 'main', '', task_id=q['id'], context_id=q['contextId'])

    # AUTH_REQUIRED answered in-band while the first stream is still open: the next turn's
    # task event reaches the old stream, which ends with "Stream ordering violation".
    answered = threading.Event()

    def on_event(ev, _raw):
        _, st = _state_of(ev, rest)
        if st == 'TASK_STATE_AUTH_REQUIRED' and not answered.is_set():
            answered.set()
            su = (ev['data'] if rest else ev['data']['result'])['statusUpdate']

            def do_reply():
                time.sleep(0.3)
                send(f'{p}-send-approve-inband.json', 'approved, go ahead',
                     'SendMessage on the AUTH_REQUIRED task (an in-band answer) while its first '
                     'stream is open -> the follow-up turn completes the task',
                     task_id=su['taskId'], context_id=su['contextId'])
            threads.append(bg(do_reply))

    r = stream(f'{p}-stream-approve-inband.sse', 'deploy 2026.10.06-1 to staging, approve first',
               'SendStreamingMessage "approve", then a SendMessage on the same task: the open stream '
               'ends with event: error "Stream ordering violation" (UnsupportedOperation)',
               on_event=on_event)
    join(*threads)
    threads.clear()
    parked, _ = _first_task_id(r, rest)
    http(agent, 'POST', f'/reject/{parked}', {}, None)  # release the executor still waiting

    if rest:
        c.rest('rest-error-version-1.json', 'GET', f'/tasks/{bogus}', None,
               'GET /tasks/{id} with A2A-Version: 1 (JS wants exactly "1.0"; a2a-python accepts it)',
               headers={'A2A-Version': '1'})
        c.rest('rest-error-content-type.json', 'POST', '/message:send',
               {'message': user_msg('run tests')},
               'POST /message:send with Content-Type: text/plain -> ContentTypeNotSupported',
               headers={**V, 'Content-Type': 'text/plain'})
    else:
        c.rpc('jsonrpc-error-version-1.json', 'GetTask', {'id': bogus},
              'GetTask with A2A-Version: 1 (JS wants exactly "1.0"; a2a-python accepts it)',
              headers={'A2A-Version': '1', 'Content-Type': 'application/json'})
        c.rpc('jsonrpc-error-content-type.json', 'GetTask', {'id': bogus},
              'JSON-RPC body sent with Content-Type: text/plain -> ContentTypeNotSupported',
              headers={**V, 'Content-Type': 'text/plain'})
        c.rpc('jsonrpc-error-no-content-type.json', 'GetTask', {'id': bogus},
              'JSON-RPC body sent without a Content-Type header', headers={**V})
        c.rpc('jsonrpc-error-id-0-subscribe.json', '', None,
              'SubscribeToTask unknown id with "id": 0: an error raised before the stream starts '
              'comes back with "id": null',
              raw_body=json.dumps({'jsonrpc': '2.0', 'id': 0, 'method': 'SubscribeToTask',
                                   'params': {'id': bogus}}).encode(), stream=True)


def run_js_compat_extras(agent: Agent, rec: Recorder) -> None:
    c = V1(agent, rec)
    m03 = {'kind': 'message', 'messageId': mid(), 'role': 'user',
           'parts': [{'kind': 'text', 'text': 'run tests'}]}
    h03 = {'Content-Type': 'application/json'}
    proto03 = {'messageId': mid(), 'role': 'ROLE_USER', 'content': [{'text': 'run tests'}]}
    c.rest('compat-rest03-message-send.json', 'POST', '/v1/message:send', {'message': proto03},
           '0.3 REST POST /v1/message:send (JS 0.3 adapter, no A2A-Version) with a 0.3 proto-JSON '
           'message (parts under "content") -> 201 Created, 0.3 proto JSON back', headers=h03)
    c.rest('compat-rest03-message-send-kind.json', 'POST', '/v1/message:send', {'message': m03},
           '0.3 REST POST /v1/message:send with a 0.3 JSON-RPC-shaped message (kind, role "user") '
           '-> 400 {code, message}', headers=h03)


# --------------------------------------------------------------------------


BEGIN = '<!-- BEGIN GENERATED by capture.py: do not edit below -->'
END = '<!-- END GENERATED -->'

SET_TITLES = {
    'py-1.3.0': 'py-1.3.0: a2a-sdk 1.3.0 (tests/interop/python/agent.py), A2A 1.0, JSON-RPC + HTTP+JSON',
    'py-0.3': 'py-0.3: a2a-sdk 0.3.26 (tests/interop/python03/agent.py), A2A 0.3, JSON-RPC',
    'js-1.3.0': 'js-1.3.0: @a2a-js/sdk 1.3.0 + express 5 (tests/interop/js/agent.mjs), A2A 1.0, '
                'JSON-RPC + HTTP+JSON',
}


def _brief(obj: Any) -> str:
    """Short JSON for the README: a message is reduced to its text and ids."""
    def shrink(o: Any) -> Any:
        if isinstance(o, dict):
            if 'messageId' in o and 'parts' in o:
                texts = [p.get('text') for p in o['parts'] if isinstance(p, dict) and 'text' in p]
                out: dict[str, Any] = {'text': ' '.join(t for t in texts if t)}
                if 'role' in o and o['role'] != 'ROLE_USER':
                    out['role'] = o['role']
                if 'kind' in o:
                    out['kind'] = o['kind']
                for k in ('taskId', 'contextId'):
                    if k in o:
                        out[k] = '<' + k + '>'
                return out
            return {k: shrink(v) for k, v in o.items()}
        if isinstance(o, list):
            return [shrink(v) for v in o]
        if isinstance(o, str) and len(o) == 36 and o.count('-') == 4:
            return '<id>'
        return o
    text = json.dumps(shrink(obj), separators=(',', ':'))
    return text if len(text) <= 110 else text[:107] + '...'


def _describe_request(req: dict, v1: bool = True) -> str:
    body = req.get('body')
    method = req['method']
    path = req['path']
    rpc = None
    if isinstance(body, dict) and 'method' in body:
        rpc = body['method']
        params = body.get('params')
        brief = _brief(params) if params is not None else ''
        text = f'`{method} {path}` `{rpc}` `{brief}`'
    elif isinstance(body, (dict, list)):
        brief = _brief(body)
        text = f'`{method} {path}` body `{brief}`'
    elif isinstance(body, str):
        text = f'`{method} {path}` raw body `{body[:60]}`'
    else:
        text = f'`{method} {path}`'
    text = re.sub(r'[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}', '{id}', text)
    text = re.sub(r'pageToken=[A-Za-z0-9_=-]+', 'pageToken=<token>', text)
    hdr = req.get('headers', {})
    flags = []
    if v1 and 'A2A-Version' not in hdr and path.startswith(('/a2a', '/.well-known')):
        flags.append('no A2A-Version')
    elif 'A2A-Version' in hdr and hdr['A2A-Version'] != '1.0':
        flags.append(f'A2A-Version {hdr["A2A-Version"]}')
    if 'Authorization' in hdr:
        flags.append('Authorization: ' + ('Bearer <token>' if hdr['Authorization'] != 'Bearer nope'
                                           else 'Bearer nope'))
    if 'If-None-Match' in hdr:
        flags.append('If-None-Match')
    if flags:
        text += ' (' + ', '.join(flags) + ')'
    return text


def write_readme() -> None:
    readme = GOLDEN / 'README.md'
    head = readme.read_text() if readme.exists() else f'# Golden captures\n\n{BEGIN}\n{END}\n'
    if BEGIN not in head:
        head = head.rstrip('\n') + f'\n\n{BEGIN}\n{END}\n'
    before = head.split(BEGIN)[0]
    after = head.split(END, 1)[1] if END in head else '\n'
    out = [BEGIN, '']
    for name in SETS:
        idx_path = GOLDEN / name / 'INDEX.json'
        if not idx_path.exists():
            continue
        idx = json.loads(idx_path.read_text())
        out.append(f'### {SET_TITLES.get(name, name)}')
        out.append('')
        out.append('| file | request | HTTP status, content-type | what it shows |')
        out.append('|---|---|---|---|')
        for e in idx:
            resp = e['response']
            ct = dict(resp['headers']).get('content-type', '-')
            status = f'{resp["status"]}, `{ct}`'
            if resp.get('aborted'):
                status += ', **connection aborted mid-body**'
            note = e['note'].replace('|', '\\|')
            req = _describe_request(e['request'], v1=name != 'py-0.3').replace('|', '\\|')
            out.append(f'| `{e["file"]}` | {req} | {status} | {note} |')
        out.append('')
    out.append(END)
    readme.write_text(before + '\n'.join(out) + after)


def ensure_venv(cfg: dict) -> None:
    if not Path(cfg.get('ready', cfg['python'])).exists() \
            or os.environ.get('CAPTURE_RUN_SETUP') == '1':
        subprocess.run(['bash', str(cfg['setup'])], check=True)
    else:
        subprocess.run(['bash', str(cfg['setup'])], check=True, stdout=subprocess.DEVNULL)


def main() -> None:
    signal.signal(signal.SIGTERM, _on_signal)
    signal.signal(signal.SIGINT, _on_signal)
    wanted = sys.argv[1:] or list(SETS)
    for name in wanted:
        if name not in SETS:
            raise SystemExit(f'unknown set {name}; known: {", ".join(SETS)}')
    try:
        for name in wanted:
            cfg = SETS[name]
            if not Path(cfg['agent']).exists():
                print(f'skip {name}: {cfg["agent"]} missing', flush=True)
                continue
            ensure_venv(cfg)
            t0 = time.monotonic()
            runner = {'py-1.3.0': capture_v1, 'py-0.3': capture_v03, 'js-1.3.0': capture_js}[name]
            runner(cfg)
            print(f'{name}: done in {time.monotonic() - t0:.1f} s', flush=True)
        write_readme()
    finally:
        _stop_all()


if __name__ == '__main__':
    main()
