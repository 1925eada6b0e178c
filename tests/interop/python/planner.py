"""A planner built on the official A2A Python SDK's client (a2a-sdk 1.3.0), for the tap tests
(tests/it/tap.rs). Sends each TEXT to the agent at URL as a new task, streaming or not, with a
bearer token on every request if given, and prints one JSON line per task: the task id and the
last state the SDK client saw (the proto enum name, e.g. TASK_STATE_COMPLETED).

usage: planner.py URL [--token T] [--stream] TEXT...
"""

import argparse
import asyncio
import json

import httpx
from a2a.client import ClientConfig, create_client
from a2a.helpers.proto_helpers import new_text_message
from a2a.types.a2a_pb2 import Role, SendMessageRequest, TaskState


async def main(args):
    headers = {'Authorization': f'Bearer {args.token}'} if args.token else {}
    async with httpx.AsyncClient(timeout=60, headers=headers) as http:
        config = ClientConfig(httpx_client=http, streaming=args.stream)
        client = await create_client(args.url, client_config=config)
        for text in args.texts:
            request = SendMessageRequest(message=new_text_message(text, role=Role.ROLE_USER))
            task, state = None, None
            async for event in client.send_message(request):
                if event.HasField('task'):
                    task, state = event.task.id, event.task.status.state
                elif event.HasField('status_update'):
                    task, state = event.status_update.task_id, event.status_update.status.state
            print(json.dumps({'task': task, 'state': TaskState.Name(state)}), flush=True)


if __name__ == '__main__':
    parser = argparse.ArgumentParser()
    parser.add_argument('url')
    parser.add_argument('--token')
    parser.add_argument('--stream', action='store_true')
    parser.add_argument('texts', nargs='+')
    asyncio.run(main(parser.parse_args()))
