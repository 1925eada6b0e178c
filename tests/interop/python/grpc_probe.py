#!/usr/bin/env python3
"""Checks an interop agent's gRPC binding end to end with the official Python SDK
(a2a-sdk 1.3.0: ClientFactory with the GRPC transport), without a2a-watch.

Run:  .venv-py13/bin/python python/grpc_probe.py CARD_URL [--token T]

CARD_URL is the agent's HTTP base (the `READY` url of agent.py / agent.mjs started
with --grpc). With --token the agent must refuse gRPC calls without it (and with a
wrong one), then the scenarios run with it. Each check prints `ok ...`; what the
server put on the wire for errors prints as `wire ...` (status code, message,
google.rpc.Status details from `grpc-status-details-bin`). Exits 1 on the first
failed check. tests/interop/GRPC.md records what this printed for both SDKs.
"""

from __future__ import annotations

import argparse
import asyncio
import re
import sys
import uuid

from typing import Any

import grpc
import grpc.aio
import httpx

from google.rpc import error_details_pb2, status_pb2

from a2a.client import A2ACardResolver, ClientConfig, ClientFactory
from a2a.client.client import ClientCallContext
from a2a.types import a2a_pb2
from a2a.types.a2a_pb2_grpc import A2AServiceStub
from a2a.utils.constants import TransportProtocol
from a2a.utils.errors import TaskNotFoundError


TERMINAL = {
    a2a_pb2.TASK_STATE_COMPLETED,
    a2a_pb2.TASK_STATE_FAILED,
    a2a_pb2.TASK_STATE_CANCELED,
    a2a_pb2.TASK_STATE_REJECTED,
}


def state_name(state: int) -> str:
    return a2a_pb2.TaskState.Name(state).removeprefix('TASK_STATE_')


def check(cond: bool, what: str) -> None:
    if not cond:
        print(f'FAIL {what}', flush=True)
        sys.exit(1)
    print(f'ok   {what}', flush=True)


def grpc_target(url: str) -> str:
    """grpc-python wants host:port; a card may say http://host:port."""
    return re.sub(r'^https?://', '', url).rstrip('/')


def wire_error(label: str, err: grpc.aio.AioRpcError) -> tuple[str, list[str]]:
    """Prints the status and its rich details; returns (code name, ErrorInfo reasons)."""
    reasons = []
    details = []
    for key, value in err.trailing_metadata() or ():
        if key == 'grpc-status-details-bin':
            status = status_pb2.Status.FromString(value)
            for any_detail in status.details:
                if any_detail.Is(error_details_pb2.ErrorInfo.DESCRIPTOR):
                    info = error_details_pb2.ErrorInfo()
                    any_detail.Unpack(info)
                    reasons.append(info.reason)
                    details.append(
                        f'ErrorInfo(reason={info.reason!r}, domain={info.domain!r}, '
                        f'metadata={dict(info.metadata)})'
                    )
                else:
                    details.append(any_detail.type_url)
        elif key not in ('content-type', 'date'):
            details.append(f'trailer {key}={value!r}')
    print(f'wire {label}: {err.code().name} {err.details()!r} {details}', flush=True)
    return err.code().name, reasons


def user_message(text: str, task: a2a_pb2.Task | None = None) -> a2a_pb2.SendMessageRequest:
    msg = a2a_pb2.Message(
        message_id=str(uuid.uuid4()),
        role=a2a_pb2.ROLE_USER,
        parts=[a2a_pb2.Part(text=text)],
    )
    if task is not None:
        msg.task_id = task.id
        msg.context_id = task.context_id
    return a2a_pb2.SendMessageRequest(message=msg)


class Probe:
    def __init__(self, card_url: str, token: str | None) -> None:
        self.card_url = card_url
        self.token = token
        self.metadata = [('a2a-version', '1.0')]
        if token:
            self.metadata.append(('authorization', f'Bearer {token}'))
        self.context = ClientCallContext(
            service_parameters={'Authorization': f'Bearer {token}'} if token else None
        )

    async def run(self) -> None:
        async with httpx.AsyncClient() as http:
            card = await A2ACardResolver(http, self.card_url).get_agent_card()
        grpc_ifaces = [i for i in card.supported_interfaces if i.protocol_binding == 'GRPC']
        check(len(grpc_ifaces) == 1, f'card lists one GRPC interface: {grpc_ifaces[0].url!r} '
              f'version {grpc_ifaces[0].protocol_version!r}' if grpc_ifaces else 'card lists GRPC')
        self.target = grpc_target(grpc_ifaces[0].url)
        config = ClientConfig(
            streaming=True,
            supported_protocol_bindings=[TransportProtocol.GRPC],
            grpc_channel_factory=lambda url: grpc.aio.insecure_channel(grpc_target(url)),
        )
        self.client = ClientFactory(config).create(card)
        self.channel = grpc.aio.insecure_channel(self.target)
        self.stub = A2AServiceStub(self.channel)
        try:
            if self.token:
                await self.auth()
            await self.scenarios()
            await self.errors()
        finally:
            await self.client.close()
            await self.channel.close()

    async def stream(self, request: a2a_pb2.SendMessageRequest) -> tuple[a2a_pb2.Task | None, list[str]]:
        """Sends over the SDK client (SendStreamingMessage); returns the task and the
        states seen, in order, until the server closes the stream."""
        task, states = None, []
        async for event in self.client.send_message(request, context=self.context):
            kind = event.WhichOneof('payload')
            if kind == 'task':
                task = event.task
                states.append(state_name(event.task.status.state))
            elif kind == 'status_update':
                states.append(state_name(event.status_update.status.state))
                if task is None:  # a follow-up turn may start without the task snapshot
                    task = a2a_pb2.Task(id=event.status_update.task_id,
                                        context_id=event.status_update.context_id)
                task.status.CopyFrom(event.status_update.status)
            elif kind == 'message':
                states.append('message')
        return task, states

    async def auth(self) -> None:
        request = user_message('hello')
        for label, md in (
            ('no token', [('a2a-version', '1.0')]),
            ('wrong token', [('a2a-version', '1.0'), ('authorization', 'Bearer nope')]),
        ):
            try:
                await self.stub.SendMessage(request, metadata=md)
                check(False, f'{label}: refused')
            except grpc.aio.AioRpcError as err:
                code, _ = wire_error(f'SendMessage, {label}', err)
                check(code == 'UNAUTHENTICATED', f'{label}: UNAUTHENTICATED')
            try:
                async for _ in self.stub.SendStreamingMessage(request, metadata=md):
                    pass
                check(False, f'{label}: stream refused')
            except grpc.aio.AioRpcError as err:
                code, _ = wire_error(f'SendStreamingMessage, {label}', err)
                check(code == 'UNAUTHENTICATED', f'{label}: stream UNAUTHENTICATED')
        reply = await self.stub.SendMessage(request, metadata=self.metadata)
        check(reply.WhichOneof('payload') == 'message', 'with the token: SendMessage answers')

    async def scenarios(self) -> None:
        task, states = await self.stream(user_message('run tests'))
        print(f'     run tests: {states}', flush=True)
        check(task is not None and states[-1] == 'COMPLETED', 'run tests streams to COMPLETED')
        completed = task

        task, states = await self.stream(user_message('fail'))
        print(f'     fail: {states}', flush=True)
        check(states[-1] == 'FAILED', 'fail streams to FAILED')

        reply = await self.stub.SendMessage(user_message('hello'), metadata=self.metadata)
        check(reply.WhichOneof('payload') == 'message', 'hello: SendMessage answers a Message')
        task, states = await self.stream(user_message('reject'))
        check(states[-1] == 'REJECTED', f'reject streams to REJECTED {states}')
        await self.crash()

        task, states = await self.stream(user_message('question'))
        print(f'     question: {states}', flush=True)
        check(states[-1] == 'INPUT_REQUIRED',
              'question: the stream ends (server closes it) at INPUT_REQUIRED')
        task2, states = await self.stream(user_message('develop', task))
        print(f'     answer on the same task: {states}', flush=True)
        check(task2.id == task.id and states[-1] == 'COMPLETED',
              'the answer on the same task streams to COMPLETED')

        await self.approval()

        listed = await self.client.list_tasks(a2a_pb2.ListTasksRequest(), context=self.context)
        ids = [t.id for t in listed.tasks]
        print(f'     ListTasks: {len(ids)} tasks, states '
              f'{[state_name(t.status.state) for t in listed.tasks]}', flush=True)
        check(completed.id in ids and task.id in ids, 'ListTasks lists the tasks')

        got = await self.client.get_task(a2a_pb2.GetTaskRequest(id=completed.id),
                                         context=self.context)
        check(got.status.state == a2a_pb2.TASK_STATE_COMPLETED
              and [a.artifact_id for a in got.artifacts] == ['test-log', 'summary'],
              f'GetTask: COMPLETED with artifacts {[a.artifact_id for a in got.artifacts]}')

        await self.subscribe_running_then_cancel()
        await self.subscribe_terminal(completed)

    async def crash(self) -> None:
        """The executor raises: what ends the stream, and what the task says after."""
        events, task_id = [], None
        try:
            async for event in self.stub.SendStreamingMessage(user_message('crash'),
                                                              metadata=self.metadata):
                kind = event.WhichOneof('payload')
                if kind == 'task':
                    task_id = event.task.id
                    events.append(f'task {state_name(event.task.status.state)}')
                elif kind == 'status_update':
                    events.append(f'status {state_name(event.status_update.status.state)}')
                else:
                    events.append(kind)
            print(f'     crash: {events}, then the stream closed with OK', flush=True)
        except grpc.aio.AioRpcError as err:
            wire_error(f'crash stream (after {events})', err)
        await asyncio.sleep(0.2)
        got = await self.stub.GetTask(a2a_pb2.GetTaskRequest(id=task_id), metadata=self.metadata)
        check(got.status.state == a2a_pb2.TASK_STATE_FAILED,
              f'crash: GetTask says {state_name(got.status.state)}')

    async def approval(self) -> None:
        """Out-of-band approval: the send stream stays open through AUTH_REQUIRED
        (the executor waits), a subscription opened then sees the rest too."""
        send = self.client.send_message(user_message('approve the deploy'),
                                        context=self.context)
        task, states = None, []
        async for event in send:
            if event.HasField('task'):
                task = event.task
            elif event.HasField('status_update'):
                states.append(state_name(event.status_update.status.state))
                task.status.CopyFrom(event.status_update.status)
                if states[-1] == 'AUTH_REQUIRED':
                    break
        check(states[-1] == 'AUTH_REQUIRED', f'approve: the stream reaches AUTH_REQUIRED {states}')
        url = re.search(r'POST (\S+)', task.status.message.parts[0].text).group(1)
        sub = self.client.subscribe(a2a_pb2.SubscribeToTaskRequest(id=task.id),
                                    context=self.context)
        first = await anext(sub)
        check(first.HasField('task')
              and first.task.status.state == a2a_pb2.TASK_STATE_AUTH_REQUIRED,
              'SubscribeToTask at AUTH_REQUIRED: first event is the task, AUTH_REQUIRED')
        async with httpx.AsyncClient() as http:
            r = await http.post(url)
            check(r.status_code == 200, f'POST {url} approves')
        for label, stream in (('send stream', send), ('subscription', sub)):
            rest = [state_name(e.status_update.status.state)
                    async for e in stream if e.HasField('status_update')]
            print(f'     {label} after the approval: {rest}', flush=True)
            check(rest[-1:] == ['COMPLETED'], f'approval: the {label} goes on to COMPLETED')

    async def subscribe_running_then_cancel(self) -> None:
        req = user_message('wait')
        req.configuration.return_immediately = True
        reply = await self.stub.SendMessage(req, metadata=self.metadata)
        task = reply.task
        check(reply.WhichOneof('payload') == 'task',
              f'return_immediately: SendMessage gives the task in {state_name(task.status.state)}')
        for _ in range(50):
            got = await self.stub.GetTask(a2a_pb2.GetTaskRequest(id=task.id), metadata=self.metadata)
            if got.status.state == a2a_pb2.TASK_STATE_WORKING:
                break
            await asyncio.sleep(0.05)
        sub = self.client.subscribe(a2a_pb2.SubscribeToTaskRequest(id=task.id),
                                    context=self.context)
        first = await anext(sub)
        check(first.HasField('task') and first.task.status.state == a2a_pb2.TASK_STATE_WORKING,
              'SubscribeToTask on a running task: first event is the task, WORKING')
        canceled = await self.client.cancel_task(a2a_pb2.CancelTaskRequest(id=task.id),
                                                 context=self.context)
        check(canceled.status.state == a2a_pb2.TASK_STATE_CANCELED,
              'CancelTask answers the task CANCELED')
        states = []
        async for event in sub:
            if event.HasField('status_update'):
                states.append(state_name(event.status_update.status.state))
        print(f'     subscription after cancel: {states}', flush=True)
        check(states[-1:] == ['CANCELED'], 'the subscription ends with CANCELED')
        try:
            await self.stub.CancelTask(a2a_pb2.CancelTaskRequest(id=task.id), metadata=self.metadata)
            print('     CancelTask again on the canceled task: accepted', flush=True)
        except grpc.aio.AioRpcError as err:
            wire_error('CancelTask on a canceled task', err)

    async def subscribe_terminal(self, completed: a2a_pb2.Task) -> None:
        events = []
        try:
            async for event in self.stub.SubscribeToTask(
                a2a_pb2.SubscribeToTaskRequest(id=completed.id), metadata=self.metadata
            ):
                events.append(event.WhichOneof('payload'))
            print(f'     SubscribeToTask on a COMPLETED task: events {events}, then closed',
                  flush=True)
            check(True, 'SubscribeToTask on a terminal task: closed normally')
        except grpc.aio.AioRpcError as err:
            code, reasons = wire_error(f'SubscribeToTask on a COMPLETED task (after {events})', err)
            check(code == 'FAILED_PRECONDITION' and reasons == ['UNSUPPORTED_OPERATION'],
                  'SubscribeToTask on a terminal task: FAILED_PRECONDITION, UNSUPPORTED_OPERATION')

    async def errors(self) -> None:
        unknown = 'no-such-task-' + uuid.uuid4().hex[:8]
        try:
            await self.client.get_task(a2a_pb2.GetTaskRequest(id=unknown), context=self.context)
            check(False, 'GetTask of an unknown id fails')
        except TaskNotFoundError as err:
            check(True, f'SDK client maps GetTask of an unknown id to TaskNotFoundError ({err})')
        for label, call in (
            ('GetTask unknown id', self.stub.GetTask(a2a_pb2.GetTaskRequest(id=unknown),
                                                     metadata=self.metadata)),
            ('CancelTask unknown id', self.stub.CancelTask(a2a_pb2.CancelTaskRequest(id=unknown),
                                                           metadata=self.metadata)),
        ):
            try:
                await call
                check(False, f'{label} fails')
            except grpc.aio.AioRpcError as err:
                code, reasons = wire_error(label, err)
                check(code == 'NOT_FOUND' and reasons == ['TASK_NOT_FOUND'],
                      f'{label}: NOT_FOUND with ErrorInfo TASK_NOT_FOUND')
        try:
            async for _ in self.stub.SubscribeToTask(a2a_pb2.SubscribeToTaskRequest(id=unknown),
                                                     metadata=self.metadata):
                pass
            check(False, 'SubscribeToTask unknown id fails')
        except grpc.aio.AioRpcError as err:
            code, reasons = wire_error('SubscribeToTask unknown id', err)
            check(code == 'NOT_FOUND', 'SubscribeToTask unknown id: NOT_FOUND')

        # What the server does with the version metadata and with what it lacks
        # (gRPC metadata keys are lowercase on the wire: grpc-python refuses 'A2A-Version').
        auth = [kv for kv in self.metadata if kv[0] == 'authorization']
        for label, md in (
            ('no a2a-version', auth),
            ('a2a-version 0.3', auth + [('a2a-version', '0.3')]),
            ('a2a-version 1.0.0', auth + [('a2a-version', '1.0.0')]),
        ):
            try:
                await self.stub.ListTasks(a2a_pb2.ListTasksRequest(), metadata=md)
                print(f'     ListTasks with {label}: accepted', flush=True)
            except grpc.aio.AioRpcError as err:
                wire_error(f'ListTasks with {label}', err)

        call = self.stub.ListTasks(a2a_pb2.ListTasksRequest(), metadata=self.metadata + [
            ('a2a-extensions', 'https://example.com/ext/not-supported/v1')])
        await call
        print(f'     ListTasks with an a2a-extensions the agent lacks: accepted; response '
              f'headers {[kv for kv in await call.initial_metadata() if kv[0] != "date"]}, '
              f'trailers {[kv for kv in await call.trailing_metadata() if kv[0] != "date"]}',
              flush=True)

        push = a2a_pb2.TaskPushNotificationConfig(task_id=unknown, url='http://127.0.0.1:9/hook')
        for label, call in (
            ('CreateTaskPushNotificationConfig (no push capability)',
             lambda: self.stub.CreateTaskPushNotificationConfig(push, metadata=self.metadata)),
            ('GetExtendedAgentCard (not configured)',
             lambda: self.stub.GetExtendedAgentCard(a2a_pb2.GetExtendedAgentCardRequest(),
                                                    metadata=self.metadata)),
            ('unknown method', lambda: self.channel.unary_unary(
                '/lf.a2a.v1.A2AService/NoSuchMethod')(b'', metadata=self.metadata)),
        ):
            try:
                await call()
                print(f'     {label}: accepted', flush=True)
            except grpc.aio.AioRpcError as err:
                wire_error(label, err)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('card_url')
    ap.add_argument('--token')
    args = ap.parse_args()
    asyncio.run(Probe(args.card_url, args.token).run())
    print('ALL OK', flush=True)


if __name__ == '__main__':
    main()
