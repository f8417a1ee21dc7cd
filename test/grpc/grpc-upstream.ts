import {
  Metadata,
  Server,
  ServerCredentials,
  credentials,
  makeGenericClientConstructor,
  status,
  type Client,
  type ClientOptions,
  type ServerDuplexStream,
  type ServerReadableStream,
  type ServerUnaryCall,
  type ServerWritableStream,
  type ServiceDefinition,
  type ServiceError,
  type StatusObject,
  type sendUnaryData,
} from '@grpc/grpc-js';

/** Messages are JSON: no proto files, no proto-loader. */
const json = {
  serialize: (value: unknown): Buffer => Buffer.from(JSON.stringify(value)),
  deserialize: (bytes: Buffer): unknown => JSON.parse(bytes.toString('utf8')),
};

function method(path: string, responseStream: boolean, requestStream = false) {
  return {
    path,
    requestStream,
    responseStream,
    requestSerialize: json.serialize,
    requestDeserialize: json.deserialize,
    responseSerialize: json.serialize,
    responseDeserialize: json.deserialize,
  };
}

/**
 * `shop.Catalog`: a unary `Lookup` and `Price`, a server-streaming `Watch`, a
 * client-streaming `Tally` (answers the messages it read, once the client
 * ends) and a bidirectional `Echo` (answers each message as it comes, ends
 * when the client does).
 */
export const catalogService: ServiceDefinition = {
  lookup: method('/shop.Catalog/Lookup', false),
  price: method('/shop.Catalog/Price', false),
  watch: method('/shop.Catalog/Watch', true),
  tally: method('/shop.Catalog/Tally', false, true),
  echo: method('/shop.Catalog/Echo', true, true),
};

/** What the server answers a unary call with: a value, or a status with trailing metadata. */
export type Answer =
  | { value: unknown }
  | { code: status; details?: string; trailers?: Record<string, string> }
  | 'hang';

/** A grpc-js server on 127.0.0.1 that counts the calls it receives and the ones cancelled. */
export class CatalogUpstream {
  readonly received: string[] = [];
  readonly cancelled: string[] = [];
  /** The messages the client-streaming and bidirectional calls read, in the order they arrived. */
  readonly messages: unknown[] = [];
  answer: Answer = { value: { ok: true } };
  /** Per method path, instead of `answer`. */
  readonly answers: Record<string, Answer> = {};
  /** What `Watch` streams before its status (or 'hang' after the messages). */
  stream: { messages: unknown[]; end: Answer } = { messages: [], end: { value: null } };
  private readonly server = new Server();
  private readonly waiters: (() => void)[] = [];
  port = 0;

  async start(): Promise<this> {
    this.server.addService(catalogService, {
      lookup: (call: ServerUnaryCall<unknown, unknown>, callback: sendUnaryData<unknown>) =>
        this.unary('/shop.Catalog/Lookup', call, callback),
      price: (call: ServerUnaryCall<unknown, unknown>, callback: sendUnaryData<unknown>) =>
        this.unary('/shop.Catalog/Price', call, callback),
      watch: (call: ServerWritableStream<unknown, unknown>) => this.watch(call),
      tally: (call: ServerReadableStream<unknown, unknown>, callback: sendUnaryData<unknown>) =>
        this.tally(call, callback),
      echo: (call: ServerDuplexStream<unknown, unknown>) => this.echo(call),
    });
    this.port = await new Promise<number>((resolve, reject) =>
      this.server.bindAsync('127.0.0.1:0', ServerCredentials.createInsecure(), (error, port) =>
        error ? reject(error) : resolve(port),
      ),
    );
    return this;
  }

  client(options: Partial<ClientOptions> = {}): Client & Record<string, Function> {
    const Catalog = makeGenericClientConstructor(catalogService, 'Catalog');
    return new Catalog(
      `127.0.0.1:${this.port}`,
      credentials.createInsecure(),
      options,
    ) as unknown as Client & Record<string, Function>;
  }

  /** Resolves once the server has seen `count` cancellations. */
  async cancellations(count: number): Promise<void> {
    while (this.cancelled.length < count)
      await new Promise<void>((resolve) => this.waiters.push(resolve));
  }

  /** Resolves once the server has received `count` calls. */
  async receivedCalls(count: number): Promise<void> {
    while (this.received.length < count)
      await new Promise<void>((resolve) => this.waiters.push(resolve));
  }

  async stop(): Promise<void> {
    this.server.forceShutdown();
  }

  private note(list: string[], path: string): void {
    list.push(path);
    for (const wake of this.waiters.splice(0)) wake();
  }

  private unary(
    path: string,
    call: ServerUnaryCall<unknown, unknown>,
    callback: sendUnaryData<unknown>,
  ): void {
    this.note(this.received, path);
    call.on('cancelled', () => this.note(this.cancelled, path));
    const answer = this.answers[path] ?? this.answer;
    if (answer === 'hang') return;
    if ('value' in answer) return callback(null, answer.value);
    callback(statusOf(answer));
  }

  private watch(call: ServerWritableStream<unknown, unknown>): void {
    this.note(this.received, '/shop.Catalog/Watch');
    call.on('cancelled', () => this.note(this.cancelled, '/shop.Catalog/Watch'));
    for (const message of this.stream.messages) call.write(message);
    const end = this.stream.end;
    if (end === 'hang') return;
    if ('value' in end) call.end();
    else call.emit('error', statusOf(end));
  }

  private tally(
    call: ServerReadableStream<unknown, unknown>,
    callback: sendUnaryData<unknown>,
  ): void {
    const path = '/shop.Catalog/Tally';
    this.note(this.received, path);
    call.on('cancelled', () => this.note(this.cancelled, path));
    const read: unknown[] = [];
    call.on('data', (message: unknown) => {
      read.push(message);
      this.messages.push(message);
    });
    call.on('end', () => callback(null, { read }));
  }

  private echo(call: ServerDuplexStream<unknown, unknown>): void {
    const path = '/shop.Catalog/Echo';
    this.note(this.received, path);
    call.on('cancelled', () => this.note(this.cancelled, path));
    call.on('data', (message: unknown) => {
      this.messages.push(message);
      call.write({ echo: message });
    });
    call.on('end', () => call.end());
  }
}

function statusOf(answer: { code: status; details?: string; trailers?: Record<string, string> }) {
  const metadata = new Metadata();
  for (const [key, value] of Object.entries(answer.trailers ?? {})) metadata.set(key, value);
  return { code: answer.code, details: answer.details ?? status[answer.code], metadata };
}

/** The outcome of one unary call: its value, or grpc-js's ServiceError. Never rejects. */
export function unary(
  client: Client & Record<string, Function>,
  name: string,
  request: unknown = {},
  options: object = {},
): Promise<{ value?: unknown; error?: ServiceError }> {
  return new Promise((resolve) => {
    client[name]!(request, new Metadata(), options, (error: ServiceError | null, value: unknown) =>
      resolve(error ? { error } : { value }),
    );
  });
}

/** Starts a unary call and returns it (to cancel it) with its outcome. */
export function startUnary(
  client: Client & Record<string, Function>,
  name: string,
  options: object = {},
): { call: { cancel(): void }; outcome: Promise<{ value?: unknown; error?: ServiceError }> } {
  let call!: { cancel(): void };
  const outcome = new Promise<{ value?: unknown; error?: ServiceError }>((resolve) => {
    call = client[name]!(
      {},
      new Metadata(),
      options,
      (error: ServiceError | null, value: unknown) => resolve(error ? { error } : { value }),
    );
  });
  return { call, outcome };
}

/** Reads a server stream to its end: the messages, then the status it ended with. */
export function readStream(
  client: Client & Record<string, Function>,
  onMessage: (message: unknown) => void = () => undefined,
): Promise<{ messages: unknown[]; status: StatusObject; error?: ServiceError }> {
  return new Promise((resolve) => {
    const messages: unknown[] = [];
    let error: ServiceError | undefined;
    const call = client.watch!({}, new Metadata(), {});
    call.on('data', (message: unknown) => {
      messages.push(message);
      onMessage(message);
    });
    call.on('error', (e: ServiceError) => (error = e));
    call.on('status', (s: StatusObject) => resolve({ messages, status: s, error }));
  });
}

/** A client-streaming `Tally`: writes `messages`, ends, and resolves with its answer or error. Never rejects. */
export function tally(
  client: Client & Record<string, Function>,
  messages: unknown[],
  options: object = {},
): Promise<{ value?: unknown; error?: ServiceError }> {
  return new Promise((resolve) => {
    const call = client.tally!(
      new Metadata(),
      options,
      (error: ServiceError | null, value: unknown) => resolve(error ? { error } : { value }),
    );
    for (const message of messages) call.write(message);
    call.end();
  });
}

/** A bidirectional `Echo`: writes `messages`, ends, and reads to the end. Never rejects. */
export function echo(
  client: Client & Record<string, Function>,
  messages: unknown[],
  options: object = {},
): Promise<{ messages: unknown[]; status: StatusObject; error?: ServiceError }> {
  return new Promise((resolve) => {
    const read: unknown[] = [];
    let error: ServiceError | undefined;
    const call = client.echo!(new Metadata(), options);
    call.on('data', (message: unknown) => read.push(message));
    call.on('error', (e: ServiceError) => (error = e));
    call.on('status', (s: StatusObject) => resolve({ messages: read, status: s, error }));
    for (const message of messages) call.write(message);
    call.end();
  });
}
