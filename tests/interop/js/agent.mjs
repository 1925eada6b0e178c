#!/usr/bin/env node
/**
 * A small A2A 1.0 agent built on the official JS SDK (@a2a-js/sdk 1.3.0, express).
 *
 * Interop fixture for a2a-watch: the same behaviour and command line as
 * tests/interop/python/agent.py. One process serves:
 *
 *   GET  /.well-known/agent-card.json   agent card (always public)
 *   POST /a2a/jsonrpc                   JSON-RPC 2.0 binding (protocolVersion 1.0)
 *   *    /a2a/rest/...                  HTTP+JSON binding (protocolVersion 1.0):
 *                                       /message:send, /message:stream, /tasks,
 *                                       /tasks/{id}, /tasks/{id}:cancel,
 *                                       /tasks/{id}:subscribe (GET and POST),
 *                                       push-config paths, /extendedAgentCard,
 *                                       and the same under /a2a/rest/{tenant}/...
 *   POST /approve/{taskId}              out-of-band approval (not A2A)
 *   POST /reject/{taskId}               out-of-band refusal  (not A2A)
 * and, with --grpc, the gRPC binding (lf.a2a.v1.A2AService, the SDK's grpcService
 * on @grpc/grpc-js) on a second loopback port, declared on the card as a GRPC
 * interface (see tests/interop/GRPC.md).
 *
 * Run:  node agent.mjs --port 0 [--token T] [--name test-runner]
 *           [--prefer jsonrpc|rest|grpc] [--v03-compat] [--log-level warning]
 *           [--exit-with-parent]
 *           [--grpc [--grpc-port 0] [--grpc-url-form hostport|http] [--grpc-only]]
 * It prints `READY http://127.0.0.1:PORT` once listening (127.0.0.1 only); with
 * --grpc the line `GRPC <the card's GRPC url>` comes just before it.
 * --grpc-url-form: the GRPC interface url is `127.0.0.1:PORT` (hostport, default)
 * or `http://127.0.0.1:PORT` (http). --grpc-only: the card lists the GRPC
 * interface alone (the HTTP bindings are still served, undeclared).
 * --token protects gRPC too: `authorization: Bearer T` metadata, else UNAUTHENTICATED.
 * With --exit-with-parent it exits as soon as its stdin closes, so a test
 * harness that dies (even by SIGKILL) leaves no agent behind.
 *
 * Behaviour, chosen by the text of the user message (first match wins):
 *   "hello"     a direct Message reply, no task
 *   "reject"    SUBMITTED -> REJECTED
 *   "crash"     SUBMITTED -> WORKING -> the executor throws (SDK marks it FAILED)
 *   "fail"      SUBMITTED -> WORKING -> FAILED (status message)
 *   "question"  SUBMITTED -> WORKING -> INPUT_REQUIRED ("Which base branch ...?");
 *               the reply on the same task -> WORKING -> review artifact -> COMPLETED
 *   "approve"   SUBMITTED -> WORKING -> AUTH_REQUIRED (message with the approval URL);
 *               POST /approve/<taskId> -> WORKING -> COMPLETED
 *               POST /reject/<taskId>  -> REJECTED
 *   "wait"      SUBMITTED -> WORKING, then nothing until CancelTask -> CANCELED
 *   otherwise   the test run: SUBMITTED -> WORKING (progress) -> text artifact in
 *               3 chunks -> data artifact {"passed": 11, "failed": 1}
 *               -> COMPLETED "1 failed, 11 passed"
 * "slow" anywhere in the text makes every step ~1 s instead of 0.05 s.
 *
 * Differences the SDK imposes (see tests/golden/README.md, js-1.3.0): every
 * execute() call must publish a `task` (or `message`) event first, also on a
 * follow-up turn, so a continued task re-publishes its current snapshot; an
 * executor exception becomes a synthesized FAILED status update, not a stream
 * error.
 */

import crypto from 'node:crypto';
import http from 'node:http';
import { parseArgs } from 'node:util';

import * as grpc from '@grpc/grpc-js';
import express from 'express';
import { AgentCard, AGENT_CARD_PATH, Role, TaskState } from '@a2a-js/sdk';
import {
  AgentEvent,
  DefaultRequestHandler,
  InMemoryTaskStore,
  UnauthenticatedUser,
} from '@a2a-js/sdk/server';
import {
  agentCardHandler,
  jsonRpcHandler,
  restHandler,
} from '@a2a-js/sdk/server/express';
import { A2AService, grpcService } from '@a2a-js/sdk/server/grpc';

const JSONRPC_PATH = '/a2a/jsonrpc';
const REST_PREFIX = '/a2a/rest';
const CARD_PATH = `/${AGENT_CARD_PATH}`; // '/.well-known/agent-card.json'
const QUESTION = 'Which base branch should I compare this diff against?';
const OPERATOR = 'interop-operator';

// ---------------------------------------------------------------------------
// small builders for the SDK's in-memory (ts-proto) objects

function textPart(text, mediaType = '') {
  return { content: { $case: 'text', value: text }, metadata: undefined, filename: '', mediaType };
}

function dataPart(value, mediaType = '') {
  return { content: { $case: 'data', value }, metadata: undefined, filename: '', mediaType };
}

function agentMessage(text, contextId, taskId = '') {
  return {
    messageId: crypto.randomUUID(),
    contextId,
    taskId,
    role: Role.ROLE_AGENT,
    parts: [textPart(text)],
    metadata: undefined,
    extensions: [],
    referenceTaskIds: [],
  };
}

function userText(message) {
  return (message?.parts ?? [])
    .filter((p) => p.content?.$case === 'text')
    .map((p) => p.content.value)
    .join(' ');
}

/** Thrown out of a pause when the task was canceled meanwhile. */
class Canceled extends Error {}

// ---------------------------------------------------------------------------
// out-of-band decisions for tasks parked in AUTH_REQUIRED, and cancellation

class Approvals {
  constructor() {
    this.waiting = new Map(); // taskId -> resolve(true | false | 'canceled')
  }

  open(taskId) {
    return new Promise((resolve) => this.waiting.set(taskId, resolve));
  }

  close(taskId) {
    this.waiting.delete(taskId);
  }

  decide(taskId, decision) {
    const resolve = this.waiting.get(taskId);
    if (!resolve) return false;
    this.waiting.delete(taskId);
    resolve(decision);
    return true;
  }
}

class InteropExecutor {
  constructor(baseUrl, approvals) {
    this.baseUrl = baseUrl;
    this.approvals = approvals;
    this.contexts = new Map(); // taskId -> contextId (for cancelTask)
    this.canceled = new Set();
    this.wakers = new Map(); // taskId -> Set of wake() for pending pauses
  }

  /** Sleep `ms`, or throw Canceled as soon as the task is canceled. */
  pause(taskId, ms) {
    if (this.canceled.has(taskId)) return Promise.reject(new Canceled());
    let wakers = this.wakers.get(taskId);
    if (!wakers) this.wakers.set(taskId, (wakers = new Set()));
    return new Promise((resolve, reject) => {
      let timer;
      const wake = () => {
        clearTimeout(timer);
        wakers.delete(wake);
        reject(new Canceled());
      };
      if (ms !== Infinity) {
        timer = setTimeout(() => {
          wakers.delete(wake);
          resolve();
        }, ms);
      }
      wakers.add(wake);
    });
  }

  execute = async (requestContext, eventBus) => {
    try {
      await this.run(requestContext, eventBus);
    } catch (err) {
      if (!(err instanceof Canceled)) throw err;
    }
  };

  async run(ctx, bus) {
    const text = userText(ctx.userMessage);
    const lowered = text.toLowerCase();
    const step = lowered.includes('slow') ? 1000 : 50;
    const taskId = ctx.taskId;
    const contextId = ctx.contextId;
    let task = ctx.task;

    if (!task && lowered.includes('hello')) {
      // Message-only exchange: no task is created.
      bus.publish(
        AgentEvent.message(
          agentMessage(
            'Hello! Send "run tests", "question", "approve", "fail" or "wait" to start a task.',
            contextId
          )
        )
      );
      return;
    }

    const newTurn = !task;
    if (newTurn) {
      task = {
        id: taskId,
        contextId,
        status: { state: TaskState.TASK_STATE_SUBMITTED, message: undefined, timestamp: undefined },
        artifacts: [],
        history: [ctx.userMessage],
        metadata: undefined,
      };
    }
    // The SDK wants a `task` (or `message`) as the first event of every
    // execute() call, follow-up turns included: re-publish the snapshot.
    bus.publish(AgentEvent.task(task));
    this.contexts.set(taskId, contextId);

    const status = (state, msg) =>
      bus.publish(
        AgentEvent.statusUpdate({
          taskId,
          contextId,
          status: {
            state,
            message: msg === undefined ? undefined : agentMessage(msg, contextId, taskId),
            timestamp: new Date().toISOString(),
          },
          metadata: undefined,
        })
      );
    const artifact = (artifactId, name, parts, { append = false, lastChunk = false } = {}) =>
      bus.publish(
        AgentEvent.artifactUpdate({
          taskId,
          contextId,
          artifact: { artifactId, name, description: '', parts, metadata: undefined, extensions: [] },
          append,
          lastChunk,
          metadata: undefined,
        })
      );
    const sleep = (ms = step) => this.pause(taskId, ms);

    // Continuation: the answer to our question.
    if (!newTurn && task.status?.state === TaskState.TASK_STATE_INPUT_REQUIRED) {
      const branch = text.trim() || 'main';
      await sleep();
      status(TaskState.TASK_STATE_WORKING, `Comparing the diff against ${branch}`);
      await sleep();
      artifact(
        'review',
        'review.json',
        [
          textPart(`Reviewed payments-api against base branch ${branch}: 2 comments, no blockers.`),
          dataPart({ baseBranch: branch, comments: 2, blockers: 0 }, 'application/json'),
        ],
        { lastChunk: true }
      );
      await sleep();
      status(TaskState.TASK_STATE_COMPLETED, `Review done against ${branch}: 2 comments`);
      return;
    }

    if (!newTurn) {
      // Any other follow-up on a live task: acknowledge and finish.
      status(TaskState.TASK_STATE_WORKING, 'Follow-up received');
      await sleep();
      status(TaskState.TASK_STATE_COMPLETED, 'Done');
      return;
    }

    await sleep();

    if (lowered.includes('reject')) {
      status(TaskState.TASK_STATE_REJECTED, 'I only run tests, review diffs and deploy builds.');
      return;
    }

    if (lowered.includes('crash')) {
      status(TaskState.TASK_STATE_WORKING, 'Starting the test runner');
      await sleep();
      // An unhandled exception: the SDK publishes a FAILED status update
      // ("Agent execution error: ...") on the task's bus.
      throw new Error('interop agent crashed on purpose');
    }

    if (lowered.includes('fail')) {
      status(TaskState.TASK_STATE_WORKING, 'Starting the test runner');
      await sleep();
      status(
        TaskState.TASK_STATE_FAILED,
        'Test runner crashed: pytest exited with status 2 (collection error)'
      );
      return;
    }

    if (lowered.includes('question')) {
      status(TaskState.TASK_STATE_WORKING, 'Reading the diff');
      await sleep();
      status(TaskState.TASK_STATE_INPUT_REQUIRED, QUESTION);
      return; // the reply re-enters execute()
    }

    if (lowered.includes('approve')) {
      status(TaskState.TASK_STATE_WORKING, 'Preparing deploy of build 2026.10.06-1 to staging');
      await sleep();
      const decision = this.approvals.open(taskId);
      let approved;
      try {
        const url = `${this.baseUrl}/approve/${taskId}`;
        status(
          TaskState.TASK_STATE_AUTH_REQUIRED,
          `Deploying build 2026.10.06-1 to staging needs operator approval: POST ${url}`
        );
        // Out-of-band auth: do not return, wait for the decision.
        approved = await decision;
      } finally {
        this.approvals.close(taskId);
      }
      if (approved === 'canceled') return;
      if (!approved) {
        status(TaskState.TASK_STATE_REJECTED, 'Deploy refused by the operator');
        return;
      }
      status(TaskState.TASK_STATE_WORKING, 'Approved; deploying');
      await sleep();
      artifact('deploy-log', 'deploy.log', [textPart('build 2026.10.06-1 is live on staging')], {
        lastChunk: true,
      });
      status(TaskState.TASK_STATE_COMPLETED, 'Deployed 2026.10.06-1 to staging');
      return;
    }

    if (lowered.includes('wait')) {
      status(TaskState.TASK_STATE_WORKING, 'Waiting for a free runner');
      await sleep(Infinity); // until CancelTask cancels us
      return;
    }

    // Default: the test run.
    status(TaskState.TASK_STATE_WORKING, 'Running 12 tests');
    await sleep();
    const chunks = [
      'collected 12 items\n',
      'tests/test_api.py ........... [ 91%]\n',
      'tests/test_refunds.py F [100%]\n',
    ];
    for (let i = 0; i < chunks.length; i++) {
      artifact('test-log', 'test-log.txt', [textPart(chunks[i], 'text/plain')], {
        append: i > 0,
        lastChunk: i === chunks.length - 1,
      });
      await sleep();
    }
    artifact('summary', 'summary.json', [dataPart({ passed: 11, failed: 1 }, 'application/json')], {
      lastChunk: true,
    });
    await sleep();
    status(TaskState.TASK_STATE_COMPLETED, '1 failed, 11 passed');
  }

  cancelTask = async (taskId, eventBus) => {
    const contextId = this.contexts.get(taskId) ?? '';
    // CancelTask waits on this bus for a terminal state: publish it first,
    // then stop whatever the execute() call for this task is waiting on.
    eventBus.publish(
      AgentEvent.statusUpdate({
        taskId,
        contextId,
        status: {
          state: TaskState.TASK_STATE_CANCELED,
          message: agentMessage('Canceled by request', contextId, taskId),
          timestamp: new Date().toISOString(),
        },
        metadata: undefined,
      })
    );
    this.canceled.add(taskId);
    this.approvals.decide(taskId, 'canceled');
    for (const wake of [...(this.wakers.get(taskId) ?? [])]) wake();
    this.wakers.delete(taskId);
  };
}

// ---------------------------------------------------------------------------
// card

function buildCard(name, baseUrl, token, prefer, v03Compat, grpcUrl, grpcOnly) {
  const jsonrpc = { url: `${baseUrl}${JSONRPC_PATH}`, protocolBinding: 'JSONRPC', protocolVersion: '1.0' };
  const rest = { url: `${baseUrl}${REST_PREFIX}`, protocolBinding: 'HTTP+JSON', protocolVersion: '1.0' };
  let interfaces = prefer === 'rest' ? [rest, jsonrpc] : [jsonrpc, rest];
  if (grpcUrl) {
    // The SDK's gRPC service accepts only the a2a-version its card's GRPC interfaces name.
    const grpcInterface = { url: grpcUrl, protocolBinding: 'GRPC', protocolVersion: '1.0' };
    if (grpcOnly) interfaces = [grpcInterface];
    else if (prefer === 'grpc') interfaces.unshift(grpcInterface);
    else interfaces.push(grpcInterface);
  }
  if (v03Compat) {
    // The SDK's 0.3 adapters only answer if the card declares 0.3 interfaces.
    interfaces.push({ ...jsonrpc, protocolVersion: '0.3' }, { ...rest, protocolVersion: '0.3' });
  }
  // Written as ProtoJSON (the wire shape) and parsed with the SDK's codec.
  const json = {
    name,
    description: `${name}: a2a-watch interop agent (@a2a-js/sdk 1.3.0, JS)`,
    version: '1.0.0',
    supportedInterfaces: interfaces,
    capabilities: { streaming: true },
    defaultInputModes: ['text/plain'],
    defaultOutputModes: ['text/plain', 'application/json'],
    skills: [
      {
        id: 'run-tests',
        name: 'Run tests',
        description: 'Runs the test suite and reports the result',
        tags: ['tests', 'ci'],
        examples: ['run tests', 'run tests slow'],
      },
      {
        id: 'review',
        name: 'Review a diff',
        description: 'Reviews a diff; asks for the base branch first',
        tags: ['review'],
        examples: ['question: review this diff'],
      },
      {
        id: 'deploy',
        name: 'Deploy',
        description: 'Deploys a build after operator approval',
        tags: ['deploy'],
        examples: ['deploy 2026.10.06-1 to staging, approve first'],
      },
    ],
  };
  if (token) {
    json.securitySchemes = { bearer: { httpAuthSecurityScheme: { scheme: 'Bearer' } } };
    json.securityRequirements = [{ schemes: { bearer: { list: [] } } }];
  }
  return AgentCard.fromJSON(json);
}

// ---------------------------------------------------------------------------
// authentication (the SDK enforces none: this middleware does, like agent.py)

class OperatorUser {
  get isAuthenticated() {
    return true;
  }
  get userName() {
    return OPERATOR;
  }
}

const PUBLIC_PREFIXES = [CARD_PATH, '/approve/', '/reject/'];

function bearerMatches(got, token) {
  const expected = Buffer.from(`Bearer ${token}`);
  const gotBuf = Buffer.from(got ?? '');
  return gotBuf.length === expected.length && crypto.timingSafeEqual(gotBuf, expected);
}

function bearerAuth(token) {
  return (req, res, next) => {
    if (PUBLIC_PREFIXES.some((p) => req.path.startsWith(p))) {
      next();
      return;
    }
    const got = req.get('authorization') ?? '';
    if (got && bearerMatches(got, token)) {
      req.a2aUser = new OperatorUser();
      next();
      return;
    }
    let challenge = 'Bearer realm="a2a"';
    if (got) challenge += ', error="invalid_token"';
    res
      .status(401)
      .set('WWW-Authenticate', challenge)
      .json({
        error: { code: 401, status: 'UNAUTHENTICATED', message: 'missing or invalid bearer token' },
      });
  };
}

const userBuilder = async (req) => req.a2aUser ?? new UnauthenticatedUser();

const grpcBearer = (call, token) =>
  Boolean(token) && bearerMatches(call.metadata.get('authorization')[0]?.toString(), token);

/**
 * The SDK's gRPC service, every method behind the bearer token when there is one:
 * without `authorization: Bearer TOKEN` metadata a call ends with UNAUTHENTICATED
 * before the SDK sees it. Calls with the token act as the same owner as HTTP ones
 * (the SDK scopes tasks to the user), so a task is visible over every binding.
 */
function grpcImplementation(requestHandler, token) {
  const service = grpcService({
    requestHandler,
    userBuilder: async (call) =>
      grpcBearer(call, token) ? new OperatorUser() : new UnauthenticatedUser(),
  });
  if (!token) return service;
  const refusal = { code: grpc.status.UNAUTHENTICATED, details: 'missing or invalid bearer token' };
  const guarded = {};
  for (const [method, impl] of Object.entries(service)) {
    const streaming = A2AService[method].responseStream;
    guarded[method] = (call, callback) => {
      if (grpcBearer(call, token)) return impl(call, callback);
      if (streaming) call.emit('error', refusal);
      else callback(refusal, null);
    };
  }
  return guarded;
}

// ---------------------------------------------------------------------------
// app

/** The HTTP app, and the request handler a gRPC server can share with it. */
function buildApp(name, baseUrl, token, prefer, v03Compat, grpcUrl, grpcOnly) {
  const approvals = new Approvals();
  const card = buildCard(name, baseUrl, token, prefer, v03Compat, grpcUrl, grpcOnly);
  const executor = new InteropExecutor(baseUrl, approvals);
  const requestHandler = new DefaultRequestHandler(card, new InMemoryTaskStore(), executor);
  const legacyCompat = v03Compat ? { legacyCompat: { enabled: true } } : {};

  const app = express();
  if (token) app.use(bearerAuth(token));

  const decide = (approved) => (req, res) => {
    const taskId = req.params.taskId;
    if (approvals.decide(taskId, approved)) {
      res.json({ taskId, approved });
    } else {
      res.status(404).json({ error: `no task ${taskId} waits for approval` });
    }
  };
  app.post('/approve/:taskId', decide(true));
  app.post('/reject/:taskId', decide(false));

  app.use(
    CARD_PATH,
    agentCardHandler({
      // The handler JSON.stringify()s what the provider returns: hand it the
      // ProtoJSON form, not the in-memory object (whose oneofs are {$case, value}).
      agentCardProvider: async () => AgentCard.toJSON(await requestHandler.getAgentCard()),
      ...legacyCompat,
    })
  );
  app.use(JSONRPC_PATH, jsonRpcHandler({ requestHandler, userBuilder, ...legacyCompat }));
  app.use(REST_PREFIX, restHandler({ requestHandler, userBuilder, ...legacyCompat }));
  return { app, requestHandler };
}

function quietConsole(level) {
  const order = ['debug', 'info', 'warning', 'error', 'critical'];
  const at = order.indexOf(level.toLowerCase());
  const noop = () => {};
  if (at > order.indexOf('debug')) console.debug = noop;
  if (at > order.indexOf('info')) {
    console.info = noop;
    console.log = noop; // the SDK logs per-request chatter with console.log/info
  }
  if (at > order.indexOf('warning')) console.warn = noop;
}

function main() {
  const { values } = parseArgs({
    options: {
      port: { type: 'string', default: '0' },
      token: { type: 'string' },
      name: { type: 'string', default: 'test-runner' },
      prefer: { type: 'string', default: 'jsonrpc' },
      'v03-compat': { type: 'boolean', default: false },
      'log-level': { type: 'string', default: 'warning' },
      'exit-with-parent': { type: 'boolean', default: false },
      grpc: { type: 'boolean', default: false },
      'grpc-port': { type: 'string', default: '0' },
      'grpc-url-form': { type: 'string', default: 'hostport' },
      'grpc-only': { type: 'boolean', default: false },
      help: { type: 'boolean', short: 'h', default: false },
    },
  });
  if (values.help) {
    process.stdout.write(
      'usage: node agent.mjs [--port 0|N] [--token T] [--name NAME] [--prefer jsonrpc|rest|grpc]\n' +
        '                      [--v03-compat] [--log-level debug|info|warning|error]\n' +
        '                      [--exit-with-parent]\n' +
        '                      [--grpc [--grpc-port 0|N] [--grpc-url-form hostport|http] [--grpc-only]]\n'
    );
    return;
  }
  const usage = (msg) => {
    process.stderr.write(`agent.mjs: ${msg}\n`);
    process.exit(2);
  };
  if (!['jsonrpc', 'rest', 'grpc'].includes(values.prefer)) {
    usage(`--prefer must be jsonrpc, rest or grpc, not ${values.prefer}`);
  }
  if (!['hostport', 'http'].includes(values['grpc-url-form'])) {
    usage(`--grpc-url-form must be hostport or http, not ${values['grpc-url-form']}`);
  }
  if ((values['grpc-only'] || values.prefer === 'grpc') && !values.grpc) {
    usage('--grpc-only and --prefer grpc need --grpc');
  }
  const parsePort = (flag) => {
    const port = Number.parseInt(values[flag], 10);
    if (!Number.isInteger(port) || port < 0 || port > 65535) usage(`bad --${flag} ${values[flag]}`);
    return port;
  };
  const port = parsePort('port');
  const grpcPort = parsePort('grpc-port');
  const stdout = console.log.bind(console);
  quietConsole(values['log-level']);

  const server = http.createServer();
  server.on('error', (err) => {
    process.stderr.write(`agent.mjs: ${err.message}\n`);
    process.exit(1);
  });
  const grpcServer = values.grpc ? new grpc.Server() : null;
  const listen = (grpcUrl) =>
    server.listen(port, '127.0.0.1', () => {
      const baseUrl = `http://127.0.0.1:${server.address().port}`;
      const { app, requestHandler } = buildApp(
        values.name,
        baseUrl,
        values.token,
        values.prefer,
        values['v03-compat'],
        grpcUrl,
        values['grpc-only']
      );
      server.on('request', app);
      if (grpcServer) {
        // The same request handler (and task store) as the HTTP bindings.
        grpcServer.addService(A2AService, grpcImplementation(requestHandler, values.token));
        stdout(`GRPC ${grpcUrl}`);
      }
      stdout(`READY ${baseUrl}`);
    });
  if (grpcServer) {
    // Bound first: the card names its port.
    grpcServer.bindAsync(
      `127.0.0.1:${grpcPort}`,
      grpc.ServerCredentials.createInsecure(),
      (err, bound) => {
        if (err) {
          process.stderr.write(`agent.mjs: gRPC: ${err.message}\n`);
          process.exit(1);
        }
        const hostPort = `127.0.0.1:${bound}`;
        listen(values['grpc-url-form'] === 'http' ? `http://${hostPort}` : hostPort);
      }
    );
  } else {
    listen(undefined);
  }

  const stop = () => {
    grpcServer?.forceShutdown();
    server.close(() => process.exit(0));
    server.closeAllConnections(); // open SSE streams would hold close() forever
    setTimeout(() => process.exit(0), 1000).unref();
  };
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
  if (values['exit-with-parent']) {
    // The parent holds our stdin open; its end (EOF or error) means the parent is gone.
    process.stdin.on('end', () => process.exit(0));
    process.stdin.on('error', () => process.exit(0));
    process.stdin.resume();
  }
}

main();
