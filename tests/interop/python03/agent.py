#!/usr/bin/env python3
"""A small A2A 0.3 agent built on the official Python SDK (a2a-sdk 0.3.x).

Interop fixture for a2a-watch (the 0.3 tolerance path). JSON-RPC only:

  GET  /.well-known/agent-card.json   0.3 agent card (also /.well-known/agent.json)
  POST /                              JSON-RPC: message/send, message/stream,
                                      tasks/get, tasks/cancel, tasks/resubscribe
  POST /approve/{taskId}              out-of-band approval (not A2A)
  POST /reject/{taskId}               out-of-band refusal  (not A2A)

Run:  .venv-py03/bin/python agent.py --port 0 [--name test-runner] [--push]
--push: the card says streaming: false and pushNotifications: true, and the SDK's
push sender (InMemoryPushNotificationConfigStore + BasePushNotificationSender)
posts the task to the registered webhooks after every event.
Prints `READY http://127.0.0.1:PORT` once listening.

Same scripted behaviour as ../python/agent.py (the 1.0 agent): "hello",
"reject", "crash", "fail", "question", "approve", "wait", default test run;
"slow" makes each step ~1 s.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import os
import socket
import sys
import threading

from typing import Any

import httpx
import uvicorn

from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from a2a.server.agent_execution import AgentExecutor, RequestContext
from a2a.server.apps import A2AStarletteApplication
from a2a.server.events import EventQueue
from a2a.server.request_handlers import DefaultRequestHandler
from a2a.server.tasks import (
    BasePushNotificationSender,
    InMemoryPushNotificationConfigStore,
    InMemoryTaskStore,
    TaskUpdater,
)
from a2a.types import (
    AgentCapabilities,
    AgentCard,
    AgentSkill,
    DataPart,
    Part,
    TaskState,
    TextPart,
    TransportProtocol,
)
from a2a.utils import new_agent_text_message, new_task


log = logging.getLogger('interop-agent-03')

QUESTION = 'Which base branch should I compare this diff against?'


def text_part(text: str) -> Part:
    return Part(root=TextPart(text=text))


def data_part(data: dict[str, Any]) -> Part:
    return Part(root=DataPart(data=data))


class Approvals:
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
    def __init__(self, base_url: str, approvals: Approvals) -> None:
        self.base_url = base_url
        self.approvals = approvals

    async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
        text = context.get_user_input()
        lowered = text.lower()
        step = 1.0 if 'slow' in lowered else 0.05
        task = context.current_task

        if task is None and 'hello' in lowered:
            await event_queue.enqueue_event(
                new_agent_text_message(
                    'Hello! Send "run tests", "question", "approve", "fail" '
                    'or "wait" to start a task.',
                    context_id=context.context_id,
                )
            )
            return

        new_turn = task is None
        if task is None:
            task = new_task(context.message)  # type: ignore[arg-type]
            await event_queue.enqueue_event(task)
        updater = TaskUpdater(event_queue, task.id, task.context_id)

        def say(msg: str):
            return updater.new_agent_message([text_part(msg)])

        if not new_turn and task.status.state == TaskState.input_required:
            branch = text.strip() or 'main'
            await asyncio.sleep(step)
            await updater.start_work(say(f'Comparing the diff against {branch}'))
            await asyncio.sleep(step)
            await updater.add_artifact(
                [
                    text_part(
                        f'Reviewed payments-api against base branch {branch}: '
                        '2 comments, no blockers.'
                    ),
                    data_part({'baseBranch': branch, 'comments': 2, 'blockers': 0}),
                ],
                artifact_id='review',
                name='review.json',
                last_chunk=True,
            )
            await asyncio.sleep(step)
            await updater.complete(say(f'Review done against {branch}: 2 comments'))
            return

        if not new_turn:
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
            # final=True: the usual 0.3 idiom; the stream ends here.
            await updater.requires_input(say(QUESTION), final=True)
            return

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
                    ),
                    final=False,
                )
                approved = await decision
            finally:
                self.approvals.close(task.id)
            if not approved:
                await updater.reject(say('Deploy refused by the operator'))
                return
            await updater.start_work(say('Approved; deploying'))
            await asyncio.sleep(step)
            await updater.add_artifact(
                [text_part('build 2026.10.06-1 is live on staging')],
                artifact_id='deploy-log',
                name='deploy.log',
                last_chunk=True,
            )
            await updater.complete(say('Deployed 2026.10.06-1 to staging'))
            return

        if 'wait' in lowered:
            await updater.start_work(say('Waiting for a free runner'))
            await asyncio.Event().wait()
            return

        await updater.start_work(say('Running 12 tests'))
        await asyncio.sleep(step)
        chunks = [
            'collected 12 items\n',
            'tests/test_api.py ........... [ 91%]\n',
            'tests/test_refunds.py F [100%]\n',
        ]
        for i, chunk in enumerate(chunks):
            await updater.add_artifact(
                [text_part(chunk)],
                artifact_id='test-log',
                name='test-log.txt',
                append=i > 0,
                last_chunk=i == len(chunks) - 1,
            )
            await asyncio.sleep(step)
        await updater.add_artifact(
            [data_part({'passed': 11, 'failed': 1})],
            artifact_id='summary',
            name='summary.json',
            last_chunk=True,
        )
        await asyncio.sleep(step)
        await updater.complete(say('1 failed, 11 passed'))

    async def cancel(self, context: RequestContext, event_queue: EventQueue) -> None:
        if context.task_id:
            self.approvals.close(context.task_id)
        updater = TaskUpdater(event_queue, context.task_id or '', context.context_id or '')
        await updater.cancel(updater.new_agent_message([text_part('Canceled by request')]))


def build_app(name: str, base_url: str, push: bool = False) -> Any:
    approvals = Approvals()
    card = AgentCard(
        name=name,
        description=f'{name}: a2a-watch interop agent (a2a-sdk 0.3.x, Python)',
        url=f'{base_url}/',
        version='1.0.0',
        protocol_version='0.3.0',
        preferred_transport=TransportProtocol.jsonrpc.value,
        capabilities=AgentCapabilities(streaming=not push, push_notifications=push),
        default_input_modes=['text/plain'],
        default_output_modes=['text/plain', 'application/json'],
        skills=[
            AgentSkill(id='run-tests', name='Run tests',
                       description='Runs the test suite and reports the result',
                       tags=['tests', 'ci'], examples=['run tests', 'run tests slow']),
            AgentSkill(id='review', name='Review a diff',
                       description='Reviews a diff; asks for the base branch first',
                       tags=['review'], examples=['question: review this diff']),
            AgentSkill(id='deploy', name='Deploy',
                       description='Deploys a build after operator approval',
                       tags=['deploy'],
                       examples=['deploy 2026.10.06-1 to staging, approve first']),
        ],
    )
    configs = InMemoryPushNotificationConfigStore()
    sender = BasePushNotificationSender(httpx.AsyncClient(), configs)
    push_args = {'push_config_store': configs, 'push_sender': sender} if push else {}
    handler = DefaultRequestHandler(
        agent_executor=InteropExecutor(base_url, approvals),
        task_store=InMemoryTaskStore(),
        **push_args,
    )
    a2a_app = A2AStarletteApplication(agent_card=card, http_handler=handler)
    app = a2a_app.build()

    async def decide(request: Request, approved: bool) -> JSONResponse:
        task_id = request.path_params['task_id']
        if approvals.decide(task_id, approved):
            return JSONResponse({'taskId': task_id, 'approved': approved})
        return JSONResponse({'error': f'no task {task_id} waits for approval'}, status_code=404)

    async def approve(request: Request) -> JSONResponse:
        return await decide(request, True)

    async def reject(request: Request) -> JSONResponse:
        return await decide(request, False)

    app.router.routes.insert(0, Route('/approve/{task_id}', approve, methods=['POST']))
    app.router.routes.insert(0, Route('/reject/{task_id}', reject, methods=['POST']))
    return app


async def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--port', type=int, default=0)
    ap.add_argument('--name', default='test-runner')
    ap.add_argument('--push', action='store_true',
                    help='no streaming; push notifications with the SDK push sender')
    ap.add_argument('--log-level', default='warning')
    ap.add_argument('--exit-with-parent', action='store_true',
                    help='exit when stdin closes, so a test harness that dies leaves no agent behind')
    args = ap.parse_args()
    if args.exit_with_parent:
        threading.Thread(target=lambda: (sys.stdin.read(), os._exit(0)), daemon=True).start()
    logging.basicConfig(level=args.log_level.upper(), stream=sys.stderr)

    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(('127.0.0.1', args.port))
    port = sock.getsockname()[1]
    base_url = f'http://127.0.0.1:{port}'

    config = uvicorn.Config(build_app(args.name, base_url, args.push), log_level=args.log_level,
                            access_log=False, lifespan='off', timeout_graceful_shutdown=1)
    server = uvicorn.Server(config)
    serve = asyncio.create_task(server.serve(sockets=[sock]))
    while not server.started:
        if serve.done():
            await serve
            sys.exit(1)
        await asyncio.sleep(0.02)
    print(f'READY {base_url}', flush=True)
    await serve


if __name__ == '__main__':
    try:
        asyncio.run(main())
    except KeyboardInterrupt:
        pass
