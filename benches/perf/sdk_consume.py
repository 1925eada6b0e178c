"""Baseline (b) of benchmark 2: the official A2A Python SDK's client (a2a-sdk 1.3.0) consuming
SubscribeToTask streams from the load agent, counting events, all streams concurrently on one
asyncio loop and one shared httpx client. Prints one JSON line: events, seconds, events/s.

usage: sdk_consume.py URL TASK_ID...   (task ids also accepted one per line on stdin with '-')
       sdk_consume.py --fleet          (lines 'URL TASK_ID' on stdin: many agents, one client
                                        each on the shared httpx client; benchmark 12, the fleet)
"""

import asyncio
import json
import sys
import time

import httpx
from a2a.client import ClientConfig, create_client
from a2a.types.a2a_pb2 import SubscribeToTaskRequest


async def consume(client, task_id, counts, retry):
    n = 0
    while True:
        try:
            async for _event in client.subscribe(SubscribeToTaskRequest(id=task_id)):
                n += 1
            break
        except Exception:
            # A fleet's thousands of subscriptions at once may see a connection reset; its
            # harness measures only once every stream is open, so the stream is opened again.
            if not retry:
                raise
            await asyncio.sleep(0.5)
    counts.append(n)


async def main(tasks_by_url, retry):
    limits = httpx.Limits(max_connections=None, max_keepalive_connections=None)
    async with httpx.AsyncClient(timeout=None, limits=limits) as http:
        config = ClientConfig(httpx_client=http, streaming=True)
        clients = {url: await create_client(url, client_config=config) for url in tasks_by_url}
        counts = []
        start = time.perf_counter()
        await asyncio.gather(
            *(consume(clients[url], t, counts, retry) for url, ids in tasks_by_url.items() for t in ids)
        )
        seconds = time.perf_counter() - start
    events = sum(counts)
    print(json.dumps({"events": events, "streams": len(counts), "seconds": seconds, "events_per_s": events / seconds}))


if __name__ == "__main__":
    tasks_by_url = {}
    fleet = sys.argv[1:] == ["--fleet"]
    if fleet:
        for line in sys.stdin:
            if line.strip():
                url, task = line.split()
                tasks_by_url.setdefault(url, []).append(task)
    else:
        url, ids = sys.argv[1], sys.argv[2:]
        if ids == ["-"]:
            ids = [line.strip() for line in sys.stdin if line.strip()]
        tasks_by_url[url] = ids
    asyncio.run(main(tasks_by_url, retry=fleet))
