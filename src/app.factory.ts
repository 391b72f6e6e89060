import { webApp } from './web/web-app.js';
import { type Server, STATUS_CODES } from 'node:http';
import type { Duplex } from 'node:stream';
import { ConsoleLogger, INestApplication, Logger, LoggerService, LogLevel } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import type { NestExpressApplication } from '@nestjs/platform-express';
import { DocumentBuilder, SwaggerModule } from '@nestjs/swagger';
import cookieParser from 'cookie-parser';
import cors from 'cors';
import express from 'express';
import type { NextFunction, Request, RequestHandler, Response } from 'express';
import helmet, { type HelmetOptions } from 'helmet';
import { AppModule } from './app.module.js';
import { ClientLimits } from './auth/client-limits.js';
import { AllExceptionsFilter } from './common/all-exceptions.filter.js';
import { AppError } from './common/app-error.js';
import { markTimedOut } from './common/client-gone.js';
import { errorBody } from './common/error-body.js';
import { MAX_JSON_DEPTH, nestsDeeperThan } from './common/json-depth.js';
import type { RawBodyRequest } from './common/raw-body.js';
import { createValidationPipe } from './common/validation.js';
import { AppConfig } from './config/app-config.js';
import { finishDocument } from './common/openapi.js';
import { Metrics } from './health/metrics.js';
import { cancelReadsOnDisconnect } from './database/read-cancellation.js';
import { LiveWsAdapter } from './live/live-ws-adapter.js';

const LEVELS: LogLevel[] = ['fatal', 'error', 'warn', 'log', 'debug', 'verbose'];

/** The levels SVC_LOG_LEVEL turns on: it and everything more severe. */
export function levelsFrom(level: string): LogLevel[] {
  return LEVELS.slice(0, LEVELS.indexOf(level as LogLevel) + 1);
}

/**
 * The process's logger: SVC_LOG_LEVEL and everything more severe, as text (coloured only when stdout is a
 * terminal and NO_COLOR is unset: a pipe or a file gets no escape codes) or, with SVC_LOG_FORMAT=json, one JSON
 * object a line (`{level, pid, timestamp, message, context}`) for a log collector.
 */
export function createLogger(config: Pick<AppConfig, 'logLevel' | 'logFormat'>): ConsoleLogger {
  const json = config.logFormat === 'json';
  return new ConsoleLogger({
    logLevels: levelsFrom(config.logLevel),
    json,
    colors: !json && Boolean(process.stdout.isTTY) && !process.env.NO_COLOR,
  });
}

export interface CreateAppOptions {
  /** The process's logger (main.ts), or quieter logs for tests; by default createLogger(config). */
  logger?: false | LogLevel[] | LoggerService;
}

/** Builds the HTTP application exactly as production runs it; tests use the same function. */
export async function createApp(
  config: AppConfig,
  options: CreateAppOptions = {},
): Promise<NestExpressApplication> {
  const logger = options.logger ?? createLogger(config);
  const app = await NestFactory.create<NestExpressApplication>(AppModule.forRoot(config), {
    logger,
    bodyParser: false,
    abortOnError: false,
  });
  configure(app, config);
  // The live-update gateway (GET /ws) on the ws library; the gateway reads its frames itself (LiveSockets), so
  // the adapter's own parsing, which would route {event, data} frames to handlers, is turned off.
  app.useWebSocketAdapter(new LiveWsAdapter(app, { messageParser: () => undefined }));
  await app.init();
  return app;
}

function configure(app: NestExpressApplication, config: AppConfig): void {
  const server = app.getHttpServer() as Server & { connectionsCheckingInterval: number };
  answerMalformedRequests(server);
  limitRequestTime(server, config.http.requestTimeoutMs);
  app.disable('x-powered-by');
  // Responses are per user and mostly `no-store`; hashing every body for an ETag cost ~4% of a small request.
  app.set('etag', false);
  app.set('trust proxy', config.http.trustedProxies.length ? config.http.trustedProxies : false);
  app.set('query parser', 'simple');
  app.enableShutdownHooks();
  app.use(beforeRoutes(app, config));
  app.use(cancelReadsOnDisconnect);
  app.useGlobalPipes(createValidationPipe());
  setUpOpenApi(app);
}

const BODILESS = new Set(['GET', 'HEAD', 'OPTIONS']);
/** Only the refresh and logout endpoints read a cookie (paths match case-insensitively, as Express routes do). */
const COOKIE_PATHS = /^\/api\/auth\/(refresh|logout)\/?$/i;

/** A step before the routes: it calls `next` to go on, or answers, or passes an error to `next`. */
type Step = (req: Request, res: Response, next: (error?: unknown) => void) => void;

/**
 * Everything that runs before the routes, as one Express middleware: the request's timing and security headers,
 * CORS (when origins are configured), the per-client limits of the public endpoints (counted before any body is
 * read: a flood costs a counter each), the web UI at / (its files, and index.html for its routes), then the
 * cookie and JSON body. Express's router pays for every layer on every request (matching, its `next`): as five
 * layers these cost GET /api/auth/me ~8% of its throughput. Each step skips what a request does not need. An
 * error of any step is answered in the house format.
 */
function beforeRoutes(app: NestExpressApplication, config: AppConfig): RequestHandler {
  const metrics = app.get(Metrics);
  const setHeaders = securityHeaders();
  const steps: Step[] = [];
  if (config.http.corsOrigins.length) {
    steps.push(
      cors({
        origin: config.http.corsOrigins,
        credentials: true,
        methods: ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'],
      }),
    );
  }
  steps.push(app.get(ClientLimits).middleware, webApp(), bodyReader(config));
  return (req, res, next) => {
    metrics.start(req);
    setHeaders(req, res);
    let index = 0;
    const step = (error?: unknown): void => {
      if (error) {
        answerError(error, req, res);
      } else if (index < steps.length) {
        // A step that throws is answered as one that failed, as Express's router does with a layer that throws.
        try {
          steps[index++](req, res, step);
        } catch (thrown) {
          if (!res.headersSent) {
            answerError(thrown, req, res);
          }
        }
      } else {
        next();
      }
    };
    step();
  };
}

/** Routes that read their body themselves, as a stream (report import: reports, archives, multipart). */
const STREAMED_BODIES = /^\/api\/import(\/|$)/i;

/** What the API's request bodies are: JSON, as application/json or a JSON-based type (application/*+json). */
const JSON_TYPES = ['application/json', 'application/*+json'];

/**
 * The cookies of the two endpoints that read one, and JSON bodies (methods without a body skip the parser). A
 * body of another type is refused with 400 naming the type wanted, rather than read as no body at all (which
 * answered a form-encoded login with "username must be a string"). That also keeps the cookie-reading
 * endpoints out of reach of the cross-site "simple" requests (text/plain, forms) a browser sends unasked.
 */
function bodyReader(config: AppConfig): (req: Request, res: Response, next: NextFunction) => void {
  const cookies = cookieParser();
  const json = express.json({
    type: JSON_TYPES,
    limit: config.http.bodyLimit,
    // Kept (a reference, not a copy) for the routes that need the exact bytes received: the billing webhook,
    // whose signature covers them, and V2 results, which are queued as they came once validated.
    verify: (req: Request & RawBodyRequest, _res, buf, charset) => {
      req.rawBody = buf;
      req.rawBodyCharset = charset;
    },
  });
  const tooDeep = AppError.validation(`The request body is nested more than ${MAX_JSON_DEPTH} levels deep`);
  const readJson = (req: Request, res: Response, next: NextFunction) => {
    if (BODILESS.has(req.method) || STREAMED_BODIES.test(req.path)) {
      next();
    } else if (hasContent(req) && !req.is(JSON_TYPES)) {
      next(AppError.validation('The request body must be JSON, sent with Content-Type: application/json'));
    } else if (Number(req.headers['content-length']) > config.http.bodyLimitBytes) {
      // body-parser would read (and discard) all of the declared bytes before answering, however many.
      refuseUnread(res, 413, `The request body exceeds the size limit of ${config.http.bodyLimit}`);
    } else {
      // Bounded before anything walks the value recursively (class-transformer overflowed its stack at ~5,000).
      json(req, res, (error?: unknown) =>
        next(error ?? (nestsDeeperThan(req.body, MAX_JSON_DEPTH) ? tooDeep : undefined)),
      );
    }
  };
  return (req, res, next) => {
    if (COOKIE_PATHS.test(req.path)) {
      cookies(req, res, () => readJson(req, res, next));
    } else {
      readJson(req, res, next);
    }
  };
}

/** Answers without reading the request's body, and closes the connection rather than wait for the body. */
function refuseUnread(res: Response, status: number, message: string): void {
  res.setHeader('Connection', 'close');
  res.status(status).json(errorBody(status, message));
}

/**
 * A whole request (headers and body) must arrive within `timeoutMs`, else 408 (answerMalformedRequests) and the
 * connection is closed: Node's default is 300 s, checked every 30 s, which let a client hold a connection open
 * for five minutes by declaring a body it never sends.
 */
function limitRequestTime(server: Server & { connectionsCheckingInterval: number }, timeoutMs: number): void {
  server.requestTimeout = timeoutMs;
  server.headersTimeout = Math.min(server.headersTimeout, timeoutMs);
  // Read when the server starts listening, which is later.
  server.connectionsCheckingInterval = Math.max(250, Math.min(5000, Math.floor(timeoutMs / 4)));
}

/** Whether the request carries body bytes: chunked, or a Content-Length other than 0 (an empty body is none). */
function hasContent(req: Request): boolean {
  const length = req.headers['content-length'];
  return req.headers['transfer-encoding'] !== undefined || (length !== undefined && Number(length) !== 0);
}

/** helmet's headers for pages a browser renders (the API reference, the web UI). */
/** The web UI's pages: scripts and styles from the service only, nothing inline. */
const APP_HEADERS: HelmetOptions = {
  contentSecurityPolicy: {
    useDefaults: false,
    directives: {
      defaultSrc: ["'self'"],
      scriptSrc: ["'self'"],
      styleSrc: ["'self'"],
      imgSrc: ["'self'", 'data:'],
      connectSrc: ["'self'"],
      fontSrc: ["'self'"],
      objectSrc: ["'none'"],
      baseUri: ["'self'"],
      formAction: ["'self'"],
      frameAncestors: ["'none'"],
    },
  },
  xFrameOptions: { action: 'deny' },
};

/** The API reference (swagger-ui, which needs inline scripts and styles). */
const DOCUMENT_HEADERS: HelmetOptions = {
  contentSecurityPolicy: {
    directives: {
      defaultSrc: ["'self'"],
      scriptSrc: ["'self'", "'unsafe-inline'"],
      styleSrc: ["'self'", "'unsafe-inline'"],
      imgSrc: ["'self'", 'data:'],
      connectSrc: ["'self'"],
    },
  },
};

/**
 * helmet for JSON API responses, as OWASP's REST security guidance has it: nothing may render or frame them,
 * nosniff, HSTS, no referrer; the headers that only concern HTML documents are left out.
 */
const API_HEADERS: HelmetOptions = {
  contentSecurityPolicy: {
    useDefaults: false,
    directives: { defaultSrc: ["'none'"], frameAncestors: ["'none'"] },
  },
  xFrameOptions: { action: 'deny' },
  originAgentCluster: false,
  xDnsPrefetchControl: false,
  xDownloadOptions: false,
  xPermittedCrossDomainPolicies: false,
  xXssProtection: false,
};

const API_PATHS = /^\/(api|v3|metrics)(\/|$)/;

/**
 * helmet's headers, computed once by helmet itself and then set as they are on every response: they do not
 * depend on the request, and running helmet's dozen middlewares per request cost ~15% of a small request's CPU.
 */
function securityHeaders(): (req: Request, res: Response) => void {
  const api = headersOf(API_HEADERS);
  const document = headersOf(DOCUMENT_HEADERS);
  const web = headersOf(APP_HEADERS);
  return (req, res) => {
    const headers = API_PATHS.test(req.path) ? api : req.path.startsWith('/swagger-ui.html') ? document : web;
    for (const [name, value] of headers) {
      res.setHeader(name, value);
    }
  };
}

function headersOf(options: HelmetOptions): [string, string][] {
  const headers = new Map<string, string>();
  const recorder = {
    setHeader: (name: string, value: string) => headers.set(name, String(value)),
    removeHeader: (name: string) => headers.delete(name),
    getHeader: (name: string) => headers.get(name),
  };
  helmet(options)({} as never, recorder as never, () => undefined);
  return [...headers.entries()];
}

/**
 * Requests Node's HTTP parser refuses before any route sees them (headers over 16 KiB, a malformed request line
 * or header) get the house error body too, instead of Node's bare status line: 431 for headers too large, 408 for
 * a request that did not arrive in time, else 400. The connection is closed after the answer, as Node does.
 */
function answerMalformedRequests(server: Server): void {
  server.on('clientError', (error: NodeJS.ErrnoException, socket: Duplex) => {
    // A response already under way on this connection cannot be followed by another: just close it.
    const answering = (socket as { _httpMessage?: { headersSent?: boolean } })._httpMessage?.headersSent;
    if (error.code === 'ECONNRESET' || !socket.writable || answering) {
      socket.destroy();
      return;
    }
    const [status, message] =
      error.code === 'HPE_HEADER_OVERFLOW'
        ? [431, 'The request headers are too large (16 KiB at most)']
        : error.code === 'ERR_HTTP_REQUEST_TIMEOUT'
          ? [408, 'The request did not arrive in time']
          : [400, 'The request is not well-formed HTTP'];
    if (status === 408) {
      // The body reader still waiting on this request fails next: a timeout to log as that, not as an outage.
      markTimedOut(socket);
    }
    const body = JSON.stringify(errorBody(status, message));
    socket.end(
      `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\nContent-Type: application/json; charset=utf-8\r\n` +
        `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
    );
  });
}

/** Failures before the routes (bad JSON, too large, a rate limit) are answered in the house format. */
function answerError(error: unknown, req: Request, res: Response): void {
  new AllExceptionsFilter().catch(error, {
    getType: () => 'http',
    switchToHttp: () => ({ getResponse: () => res, getRequest: () => req }),
  } as never);
}

function setUpOpenApi(app: INestApplication): void {
  const { baseUrl } = app.get(AppConfig).http;
  const document = SwaggerModule.createDocument(
    app,
    new DocumentBuilder()
      .setTitle('Test Management Service')
      .setDescription(
        'Test results in (V1 synchronous, V2 queue-backed, server-side report import), read live. ' +
          'Authenticate with `Authorization: Bearer <token>`: an access JWT from /api/auth/login, or an API token (`tms_…`).',
      )
      .setVersion('1')
      .addServer(baseUrl, 'This service (SVC_BASE_URL)')
      .addBearerAuth(
        { type: 'http', scheme: 'bearer', description: 'Access JWT or API token (tms_…)' },
        'bearer',
      )
      .addCookieAuth('svc_refresh', { type: 'apiKey', in: 'cookie', name: 'svc_refresh' }, 'svc_refresh')
      .build(),
  );
  finishDocument(document);
  SwaggerModule.setup('swagger-ui.html', app, document, {
    jsonDocumentUrl: 'v3/api-docs',
    yamlDocumentUrl: 'v3/api-docs.yaml',
    customSiteTitle: 'Test Management Service API',
  });
}

export function bootLogger(): Logger {
  return new Logger('Boot');
}
