#!/usr/bin/env python3
"""A small A2A 1.0 agent built on the official Python SDK (a2a-sdk 1.3.0).

Interop fixture for a2a-watch. One process serves:

  GET  /.well-known/agent-card.json   agent card (always public)
  POST /a2a/jsonrpc                   JSON-RPC 2.0 binding (protocolVersion 1.0)
  *    /a2a/rest/...                  HTTP+JSON binding (protocolVersion 1.0):
                                      /message:send, /message:stream, /tasks,
                                      /tasks/{id}, /tasks/{id}:cancel,
                                      /tasks/{id}:subscribe (GET and POST)
  POST /approve/{taskId}              out-of-band approval (not A2A)
  POST /reject/{taskId}               out-of-band refusal  (not A2A)
and, with --grpc, the gRPC binding (lf.a2a.v1.A2AService, the SDK's GrpcHandler on
a grpc.aio server) on a second loopback port, declared on the card as a GRPC
interface (see tests/interop/GRPC.md).

Run:  .venv-py13/bin/python agent.py --port 0 [--token T] [--name test-runner]
          [--prefer jsonrpc|rest|grpc] [--v03-compat] [--push]
          [--grpc [--grpc-port 0] [--grpc-url-form hostport|http] [--grpc-only]
                  [--grpc-tls DIR]]
--push: the card says streaming: false and pushNotifications: true, and the SDK's
own push sender (InMemoryPushNotificationConfigStore + BasePushNotificationSender)
delivers every event to the registered webhooks.
It prints `READY http://127.0.0.1:PORT` once listening; with --grpc the line
`GRPC <the card's GRPC url>` comes just before it.
--grpc-url-form: the GRPC interface url is `127.0.0.1:PORT` (hostport, default)
or `http://127.0.0.1:PORT` (http). --grpc-only: the card lists the GRPC
interface alone (the HTTP bindings are still served, undeclared).
--token protects gRPC too: `authorization: Bearer T` metadata, else UNAUTHENTICATED.

Behaviour, chosen by the text of the user message (first match wins):
  "hello"     a direct Message reply, no task
  "reject"    SUBMITTED -> REJECTED
  "crash"     SUBMITTED -> WORKING -> the executor raises (SDK marks it FAILED)
  "fail"      SUBMITTED -> WORKING -> FAILED (status message)
  "question"  SUBMITTED -> WORKING -> INPUT_REQUIRED ("Which base branch ...?");
              the reply on the same task -> WORKING -> review artifact -> COMPLETED
  "approve"   SUBMITTED -> WORKING -> AUTH_REQUIRED (message with the approval URL);
              POST /approve/<taskId> -> WORKING -> COMPLETED
              POST /reject/<taskId>  -> REJECTED
  "wait"      SUBMITTED -> WORKING, then nothing until CancelTask -> CANCELED
  otherwise   the test run: SUBMITTED -> WORKING (progress) -> text artifact in
              3 chunks -> data artifact {"passed": 11, "failed": 1}
              -> COMPLETED "1 failed, 11 passed"
"slow" anywhere in the text makes every step ~1 s instead of 0.05 s.
"""

from __future__ import annotations

import argparse
import asyncio
import hmac
import json
import logging
import os
import socket
import sys
import threading

from typing import Any

import grpc
import grpc.aio
import httpx
import uvicorn

from starlette.applications import Starlette
from starlette.authentication import AuthCredentials, SimpleUser
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from a2a.auth.user import UnauthenticatedUser, User
from a2a.helpers import (
    new_data_part,
    new_task_from_user_message,
    new_text_message,
    new_text_part,
)
from a2a.server.agent_execution import AgentExecutor, RequestContext
from a2a.server.events import EventQueue
from a2a.server.request_handlers import DefaultRequestHandler
from a2a.server.request_handlers.grpc_handler import (
    DefaultGrpcServerCallContextBuilder,
    GrpcHandler,
)
from a2a.server.routes import (
    create_agent_card_routes,
    create_jsonrpc_routes,
    create_rest_routes,
)
from a2a.server.tasks import (
    BasePushNotificationSender,
    InMemoryPushNotificationConfigStore,
    InMemoryTaskStore,
    TaskUpdater,
)
from a2a.types import (
    AgentCapabilities,
    AgentCard,
    AgentInterface,
    AgentSkill,
    HTTPAuthSecurityScheme,
    Role,
    SecurityRequirement,
    SecurityScheme,
    StringList,
    TaskState,
)
from a2a.types.a2a_pb2_grpc import add_A2AServiceServicer_to_server
from a2a.utils.constants import AGENT_CARD_WELL_KNOWN_PATH, TransportProtocol


log = logging.getLogger('interop-agent')

JSONRPC_PATH = '/a2a/jsonrpc'
REST_PREFIX = '/a2a/rest'
QUESTION = 'Which base branch should I compare this diff against?'
# The owner of every authenticated call, on every binding: the SDK scopes tasks to it.
OPERATOR = 'interop-operator'


class Approvals:
    """Out-of-band decisions for tasks parked in AUTH_REQUIRED."""

    def __init__(self) -> None:
        self._waiting: dict[str, asyncio.Future[bool]] = {}

    def open(self, task_id: str) -> asyncio.Future[bool]:
        fut: asyncio.Future[bool] = asyncio.get_running_loop().create_future()
        self._waiting[task_id] = fut
        return fut

    def close(self, task_id: str) -> None:
        self._waiting.pop(task_id, None)

    def decide(self, task_id: str, approved: bool) -> bool:
        fut = self._waiting.pop(task_id, None)
        if fut is None or fut.done():
            return False
        fut.set_result(approved)
        return True


class InteropExecutor(AgentExecutor):
    """Scripted agent: the user's text picks the scenario."""

    def __init__(self, base_url: str, approvals: Approvals) -> None:
        self.base_url = base_url
        self.approvals = approvals

    async def execute(
        self, context: RequestContext, event_queue: EventQueue
    ) -> None:
        text = context.get_user_input()
        lowered = text.lower()
        step = 1.0 if 'slow' in lowered else 0.05
        task = context.current_task

        if task is None and 'hello' in lowered:
            # Message-only exchange: no task is created.
            await event_queue.enqueue_event(
                new_text_message(
                    'Hello! Send "run tests", "question", "approve", "fail" '
                    'or "wait" to start a task.',
                    context_id=context.context_id,
                )
            )
            return

        if task is None:
            task = new_task_from_user_message(context.message)
            await event_queue.enqueue_event(task)
            new_turn = True
        else:
            new_turn = False
        updater = TaskUpdater(event_queue, task.id, task.context_id)

        def say(msg: str):
            return updater.new_agent_message([new_text_part(msg)])

        # Continuation: the answer to our question.
        if not new_turn and task.status.state == TaskState.TASK_STATE_INPUT_REQUIRED:
            branch = text.strip() or 'main'
            await asyncio.sleep(step)
            await updater.start_work(say(f'Comparing the diff against {branch}'))
            await asyncio.sleep(step)
            await updater.add_artifact(
                [
                    new_text_part(
                        f'Reviewed payments-api against base branch {branch}: '
                        '2 comments, no blockers.'
                    ),
                    new_data_part(
                        {'baseBranch': branch, 'comments': 2, 'blockers': 0},
                        media_type='application/json',
                    ),
                ],
                artifact_id='review',
                name='review.json',
                last_chunk=True,
            )
            await asyncio.sleep(step)
            await updater.complete(say(f'Review done against {branch}: 2 comments'))
            return

        if not new_turn:
            # Any other follow-up on a live task: acknowledge and finish.
            await updater.start_work(say('Follow-up received'))
            await asyncio.sleep(step)
            await updater.complete(say('Done'))
            return

        await asyncio.sleep(step)

        if 'reject' in lowered:
            await updater.reject(say('I only run tests, review diffs and deploy builds.'))
            return

        if 'crash' in lowered:
            await updater.start_work(say('Starting the test runner'))
            await asyncio.sleep(step)
            # An unhandled exception: the SDK marks the task FAILED and sends
            # the error to open streams (`event: error`).
            raise RuntimeError('interop agent crashed on purpose')

        if 'fail' in lowered:
            await updater.start_work(say('Starting the test runner'))
            await asyncio.sleep(step)
            await updater.failed(
                say('Test runner crashed: pytest exited with status 2 (collection error)')
            )
            return

        if 'question' in lowered:
            await updater.start_work(say('Reading the diff'))
            await asyncio.sleep(step)
            await updater.requires_input(say(QUESTION))
            return  # yields control; the reply re-enters execute()

        if 'approve' in lowered:
            await updater.start_work(say('Preparing deploy of build 2026.10.06-1 to staging'))
            await asyncio.sleep(step)
            decision = self.approvals.open(task.id)
            try:
                url = f'{self.base_url}/approve/{task.id}'
                await updater.requires_auth(
                    say(
                        'Deploying build 2026.10.06-1 to staging needs operator '
                        f'approval: POST {url}'
                    )
                )
                # Out-of-band auth: do not return, wait for the decision.
                approved = await decision
            finally:
                self.approvals.close(task.id)
            if not approved:
                await updater.reject(say('Deploy refused by the operator'))
                return
            await updater.start_work(say('Approved; deploying'))
            await asyncio.sleep(step)
            await updater.add_artifact(
                [new_text_part('build 2026.10.06-1 is live on staging')],
                artifact_id='deploy-log',
                name='deploy.log',
                last_chunk=True,
            )
            await updater.complete(say('Deployed 2026.10.06-1 to staging'))
            return

        if 'wait' in lowered:
            await updater.start_work(say('Waiting for a free runner'))
            await asyncio.Event().wait()  # until CancelTask cancels us
            return

        # Default: the test run.
        await updater.start_work(say('Running 12 tests'))
        await asyncio.sleep(step)
        chunks = [
            'collected 12 items\n',
            'tests/test_api.py ........... [ 91%]\n',
            'tests/test_refunds.py F [100%]\n',
        ]
        for i, chunk in enumerate(chunks):
            await updater.add_artifact(
                [new_text_part(chunk, media_type='text/plain')],
                artifact_id='test-log',
                name='test-log.txt',
                append=i > 0,
                last_chunk=i == len(chunks) - 1,
            )
            await asyncio.sleep(step)
        await updater.add_artifact(
            [new_data_part({'passed': 11, 'failed': 1}, media_type='application/json')],
            artifact_id='summary',
            name='summary.json',
            last_chunk=True,
        )
        await asyncio.sleep(step)
        await updater.complete(say('1 failed, 11 passed'))

    async def cancel(
        self, context: RequestContext, event_queue: EventQueue
    ) -> None:
        if context.task_id:
            self.approvals.close(context.task_id)
        updater = TaskUpdater(event_queue, context.task_id or '', context.context_id or '')
        await updater.cancel(updater.new_agent_message([new_text_part('Canceled by request')]))


def build_card(name: str, base_url: str, token: str | None, prefer: str,
               v03_compat: bool = False, push: bool = False,
               grpc_url: str | None = None, grpc_only: bool = False) -> AgentCard:
    jsonrpc = AgentInterface(
        url=f'{base_url}{JSONRPC_PATH}',
        protocol_binding=TransportProtocol.JSONRPC.value,
        protocol_version='1.0',
    )
    rest = AgentInterface(
        url=f'{base_url}{REST_PREFIX}',
        protocol_binding=TransportProtocol.HTTP_JSON.value,
        protocol_version='1.0',
    )
    interfaces = [rest, jsonrpc] if prefer == 'rest' else [jsonrpc, rest]
    if grpc_url:
        grpc_interface = AgentInterface(
            url=grpc_url,
            protocol_binding=TransportProtocol.GRPC.value,
            protocol_version='1.0',
        )
        if grpc_only:
            interfaces = [grpc_interface]
        elif prefer == 'grpc':
            interfaces.insert(0, grpc_interface)
        else:
            interfaces.append(grpc_interface)
    if v03_compat:
        # Declaring a 0.3 interface makes the SDK merge the 0.3 top-level card
        # fields (url, preferredTransport, protocolVersion, ...) in: a hybrid card.
        interfaces.append(
            AgentInterface(
                url=f'{base_url}{JSONRPC_PATH}',
                protocol_binding=TransportProtocol.JSONRPC.value,
                protocol_version='0.3',
            )
        )
    card = AgentCard(
        name=name,
        description=f'{name}: a2a-watch interop agent (a2a-sdk 1.3.0, Python)',
        version='1.0.0',
        supported_interfaces=interfaces,
        capabilities=AgentCapabilities(streaming=not push, push_notifications=push),
        default_input_modes=['text/plain'],
        default_output_modes=['text/plain', 'application/json'],
        skills=[
            AgentSkill(
                id='run-tests',
                name='Run tests',
                description='Runs the test suite and reports the result',
                tags=['tests', 'ci'],
                examples=['run tests', 'run tests slow'],
            ),
            AgentSkill(
                id='review',
                name='Review a diff',
                description='Reviews a diff; asks for the base branch first',
                tags=['review'],
                examples=['question: review this diff'],
            ),
            AgentSkill(
                id='deploy',
                name='Deploy',
                description='Deploys a build after operator approval',
                tags=['deploy'],
                examples=['deploy 2026.10.06-1 to staging, approve first'],
            ),
        ],
    )
    if token:
        card.security_schemes['bearer'].CopyFrom(
            SecurityScheme(
                http_auth_security_scheme=HTTPAuthSecurityScheme(scheme='Bearer')
            )
        )
        req = SecurityRequirement()
        req.schemes['bearer'].CopyFrom(StringList())
        card.security_requirements.append(req)
    return card


class BearerAuth:
    """Pure ASGI middleware: Bearer token on everything but the card and the
    approval routes. Sets scope["user"] so the SDK scopes tasks to the owner."""

    PUBLIC_PREFIXES = (AGENT_CARD_WELL_KNOWN_PATH, '/approve/', '/reject/')

    def __init__(self, app: Any, token: str) -> None:
        self.app = app
        self.expected = f'Bearer {token}'.encode()

    async def __call__(self, scope: dict, receive: Any, send: Any) -> None:
        if scope['type'] != 'http' or scope['path'].startswith(self.PUBLIC_PREFIXES):
            await self.app(scope, receive, send)
            return
        got = b''
        for k, v in scope.get('headers', []):
            if k == b'authorization':
                got = v
                break
        if got and hmac.compare_digest(got, self.expected):
            scope['user'] = SimpleUser(OPERATOR)
            scope['auth'] = AuthCredentials(['authenticated'])
            await self.app(scope, receive, send)
            return
        body = json.dumps(
            {
                'error': {
                    'code': 401,
                    'status': 'UNAUTHENTICATED',
                    'message': 'missing or invalid bearer token',
                }
            }
        ).encode()
        challenge = 'Bearer realm="a2a"'
        if got:
            challenge += ', error="invalid_token"'
        await send(
            {
                'type': 'http.response.start',
                'status': 401,
                'headers': [
                    (b'content-type', b'application/json'),
                    (b'content-length', str(len(body)).encode()),
                    (b'www-authenticate', challenge.encode()),
                ],
            }
        )
        await send({'type': 'http.response.body', 'body': body})


def build_app(name: str, base_url: str, token: str | None, prefer: str,
              v03_compat: bool = False, push: bool = False,
              grpc_url: str | None = None,
              grpc_only: bool = False) -> tuple[Any, DefaultRequestHandler]:
    """The HTTP app, and the request handler a gRPC server can share with it."""
    approvals = Approvals()
    card = build_card(name, base_url, token, prefer, v03_compat, push, grpc_url, grpc_only)
    configs = InMemoryPushNotificationConfigStore()
    sender = BasePushNotificationSender(httpx.AsyncClient(), configs)
    push_args = {'push_config_store': configs, 'push_sender': sender} if push else {}
    handler = DefaultRequestHandler(
        agent_executor=InteropExecutor(base_url, approvals),
        task_store=InMemoryTaskStore(),
        agent_card=card,
        **push_args,
    )

    async def decide(request: Request, approved: bool) -> JSONResponse:
        task_id = request.path_params['task_id']
        if approvals.decide(task_id, approved):
            return JSONResponse({'taskId': task_id, 'approved': approved})
        return JSONResponse(
            {'error': f'no task {task_id} waits for approval'}, status_code=404
        )

    async def approve(request: Request) -> JSONResponse:
        return await decide(request, True)

    async def reject(request: Request) -> JSONResponse:
        return await decide(request, False)

    routes = [
        # Custom routes first: the SDK's REST routes end with a catch-all
        # Mount('/{tenant}') that would swallow them.
        Route('/approve/{task_id}', approve, methods=['POST']),
        Route('/reject/{task_id}', reject, methods=['POST']),
        *create_agent_card_routes(card),
        *create_jsonrpc_routes(
            handler, rpc_url=JSONRPC_PATH, enable_v0_3_compat=v03_compat
        ),
        *create_rest_routes(
            handler, path_prefix=REST_PREFIX, enable_v0_3_compat=v03_compat
        ),
    ]
    app: Any = Starlette(routes=routes)
    if token:
        app = BearerAuth(app, token)
    return app, handler


class GrpcCallUser(DefaultGrpcServerCallContextBuilder):
    """gRPC calls that carry the token act as the same owner as HTTP calls (the
    SDK scopes tasks to the user), so a task is visible over every binding."""

    def __init__(self, token: str | None) -> None:
        self.expected = f'Bearer {token}' if token else None

    def build_user(self, context: grpc.aio.ServicerContext) -> User:
        if self.expected and bearer_matches(context.invocation_metadata(), self.expected):
            return OperatorUser()
        return UnauthenticatedUser()


class OperatorUser(User):
    @property
    def is_authenticated(self) -> bool:
        return True

    @property
    def user_name(self) -> str:
        return OPERATOR


def bearer_matches(metadata: Any, expected: str) -> bool:
    got = next((v for k, v in metadata or () if k.lower() == 'authorization'), '')
    if isinstance(got, bytes):
        got = got.decode('latin-1')
    return bool(got) and hmac.compare_digest(got.encode(), expected.encode())


class GrpcBearerAuth(grpc.aio.ServerInterceptor):
    """Every gRPC method needs `authorization: Bearer TOKEN` metadata; without it
    the call ends with UNAUTHENTICATED before the SDK sees it (the card is only
    served over HTTP, and stays public)."""

    def __init__(self, token: str) -> None:
        self.expected = f'Bearer {token}'

    async def intercept_service(self, continuation: Any, details: Any) -> Any:
        handler = await continuation(details)
        if handler is None or bearer_matches(details.invocation_metadata, self.expected):
            return handler
        message = 'missing or invalid bearer token'

        async def deny(request: Any, context: grpc.aio.ServicerContext) -> Any:
            await context.abort(grpc.StatusCode.UNAUTHENTICATED, message)

        async def deny_stream(request: Any, context: grpc.aio.ServicerContext) -> Any:
            await context.abort(grpc.StatusCode.UNAUTHENTICATED, message)
            yield  # an async generator, like the handler it replaces

        if handler.response_streaming:
            return grpc.unary_stream_rpc_method_handler(
                deny_stream,
                request_deserializer=handler.request_deserializer,
                response_serializer=handler.response_serializer,
            )
        return grpc.unary_unary_rpc_method_handler(
            deny,
            request_deserializer=handler.request_deserializer,
            response_serializer=handler.response_serializer,
        )


def bind_grpc(port: int, token: str | None, tls_dir: str | None) -> tuple[grpc.aio.Server, int]:
    """A gRPC server bound to 127.0.0.1:port (0 = a free one), not started yet:
    the card needs its port before the request handler exists. With tls_dir, it
    serves TLS with a new certificate for localhost, whose CA it writes to
    tls_dir/cert.pem for the client to trust."""
    server = grpc.aio.server(interceptors=[GrpcBearerAuth(token)] if token else [])
    if tls_dir is None:
        return server, server.add_insecure_port(f'127.0.0.1:{port}')
    key_pem, cert_pem, ca_pem = localhost_certificate()
    with open(os.path.join(tls_dir, 'cert.pem'), 'wb') as f:
        f.write(ca_pem)
    credentials = grpc.ssl_server_credentials([(key_pem, cert_pem)])
    return server, server.add_secure_port(f'127.0.0.1:{port}', credentials)


def localhost_certificate() -> tuple[bytes, bytes, bytes]:
    """A one-day CA and, signed by it, a key and certificate for DNS:localhost
    (PEM: key, certificate, CA). webpki refuses a CA certificate as a server's own."""
    import datetime
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    now = datetime.datetime.now(datetime.timezone.utc)

    def issue(subject: str, key: Any, issuer: str, signer: Any, ca: bool) -> Any:
        builder = (
            x509.CertificateBuilder()
            .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, subject)]))
            .issuer_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, issuer)]))
            .public_key(key.public_key())
            .serial_number(x509.random_serial_number())
            .not_valid_before(now - datetime.timedelta(minutes=5))
            .not_valid_after(now + datetime.timedelta(days=1))
            .add_extension(x509.BasicConstraints(ca=ca, path_length=None), critical=True)
        )
        if not ca:
            builder = builder.add_extension(
                x509.SubjectAlternativeName([x509.DNSName('localhost')]), critical=False)
        return builder.sign(signer, hashes.SHA256())

    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca = issue('interop test CA', ca_key, 'interop test CA', ca_key, True)
    key = ec.generate_private_key(ec.SECP256R1())
    leaf = issue('localhost', key, 'interop test CA', ca_key, False)
    pem = serialization.Encoding.PEM
    key_pem = key.private_bytes(pem, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())
    return key_pem, leaf.public_bytes(pem), ca.public_bytes(pem)


async def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--port', type=int, default=0, help='0 = pick a free port')
    ap.add_argument('--token', default=None, help='require Authorization: Bearer TOKEN')
    ap.add_argument('--name', default='test-runner', help='agent name on the card')
    ap.add_argument('--prefer', choices=['jsonrpc', 'rest', 'grpc'], default='jsonrpc',
                    help='which interface the card lists first')
    ap.add_argument('--grpc', action='store_true',
                    help='also serve the gRPC binding on a second port, a GRPC interface on the card')
    ap.add_argument('--grpc-port', type=int, default=0, help='0 = pick a free port')
    ap.add_argument('--grpc-url-form', choices=['hostport', 'http'], default='hostport',
                    help="the GRPC interface url: 127.0.0.1:PORT or http://127.0.0.1:PORT")
    ap.add_argument('--grpc-only', action='store_true',
                    help='the card lists only the GRPC interface')
    ap.add_argument('--grpc-tls', metavar='DIR', default=None,
                    help='serve gRPC over TLS (a certificate for localhost, its CA in DIR/cert.pem); '
                         'the interface url is https://localhost:PORT')
    ap.add_argument('--v03-compat', action='store_true',
                    help='also serve A2A 0.3 (SDK adapter) and declare a 0.3 JSONRPC interface')
    ap.add_argument('--push', action='store_true',
                    help='no streaming; push notifications with the SDK push sender')
    ap.add_argument('--log-level', default='warning')
    ap.add_argument('--exit-with-parent', action='store_true',
                    help='exit when stdin closes, so a test harness that dies leaves no agent behind')
    args = ap.parse_args()
    if (args.grpc_only or args.prefer == 'grpc') and not args.grpc:
        ap.error('--grpc-only and --prefer grpc need --grpc')
    if args.exit_with_parent:
        threading.Thread(target=lambda: (sys.stdin.read(), os._exit(0)), daemon=True).start()

    logging.basicConfig(level=args.log_level.upper(), stream=sys.stderr)

    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(('127.0.0.1', args.port))
    port = sock.getsockname()[1]
    base_url = f'http://127.0.0.1:{port}'

    grpc_server, grpc_url = None, None
    if args.grpc:
        grpc_server, grpc_port = bind_grpc(args.grpc_port, args.token, args.grpc_tls)
        grpc_url = f'127.0.0.1:{grpc_port}'
        if args.grpc_tls:
            grpc_url = f'https://localhost:{grpc_port}'
        elif args.grpc_url_form == 'http':
            grpc_url = f'http://{grpc_url}'
    app, handler = build_app(args.name, base_url, args.token, args.prefer, args.v03_compat,
                             args.push, grpc_url, args.grpc_only)
    if grpc_server is not None:
        # The same request handler (and task store) as the HTTP bindings.
        add_A2AServiceServicer_to_server(
            GrpcHandler(handler, context_builder=GrpcCallUser(args.token)), grpc_server
        )
        await grpc_server.start()
    config = uvicorn.Config(
        app, log_level=args.log_level, access_log=False, lifespan='off',
        timeout_graceful_shutdown=1,
    )
    server = uvicorn.Server(config)
    serve = asyncio.create_task(server.serve(sockets=[sock]))
    while not server.started:
        if serve.done():
            await serve  # re-raise the startup error
            sys.exit(1)
        await asyncio.sleep(0.02)
    if grpc_url:
        print(f'GRPC {grpc_url}', flush=True)
    print(f'READY {base_url}', flush=True)
    await serve
    if grpc_server is not None:
        await grpc_server.stop(0)


if __name__ == '__main__':
    try:
        asyncio.run(main())
    except KeyboardInterrupt:
        pass
