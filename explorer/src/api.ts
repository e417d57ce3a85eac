// The page's only connection to the service: GraphQL over HTTP (queries, and the mutations it acts with), the export routes,
// and decisionEvents over graphql-transport-ws.

const TOKEN_KEY = "decisiontrail.token";

export class ApiError extends Error {
  constructor(
    message: string,
    readonly code: string | undefined,
    /** The input field a VALIDATION_FAILED names (``extensions.field``), if any. */
    readonly field: string | undefined = undefined,
  ) {
    super(message);
  }
}

export function storedToken(): string {
  return sessionStorage.getItem(TOKEN_KEY) ?? "";
}

export function storeToken(token: string): void {
  if (token) sessionStorage.setItem(TOKEN_KEY, token);
  else sessionStorage.removeItem(TOKEN_KEY);
}

function headers(): Record<string, string> {
  const token = storedToken();
  const sent: Record<string, string> = { "content-type": "application/json", accept: "application/json" };
  if (token) sent.authorization = `Bearer ${token}`;
  return sent;
}

interface GraphQLAnswer<T> {
  data?: T | null;
  errors?: { message: string; extensions?: { code?: string; field?: string } }[];
}

/**
 * How long the page waits for an answer before it asks again: past the service's own limit on a
 * query (30 s by default), so a slow answer is not cut short. A response lost on the way would
 * otherwise leave the page waiting for good: fetch has no time limit of its own.
 */
const ANSWER_TIMEOUT_MS = 35_000;
const ATTEMPTS = 2;

/** One GraphQL query (reading, so asking again is safe); its first error, if any, is thrown with its code. */
export async function query<T>(text: string, variables: Record<string, unknown> = {}): Promise<T> {
  return send<T>(text, variables, ATTEMPTS);
}

/**
 * One GraphQL mutation, sent once: an answer lost on the way is reported, never asked again, since
 * the service may have done it (the page reads what changed afterwards).
 */
export async function mutate<T>(text: string, variables: Record<string, unknown> = {}): Promise<T> {
  return send<T>(text, variables, 1);
}

async function send<T>(text: string, variables: Record<string, unknown>, attempts: number): Promise<T> {
  let response: Response | undefined;
  for (let attempt = 1; response === undefined; attempt += 1) {
    try {
      response = await fetch("/graphql", {
        method: "POST",
        headers: headers(),
        body: JSON.stringify({ query: text, variables }),
        credentials: "same-origin",
        signal: AbortSignal.timeout(ANSWER_TIMEOUT_MS),
      });
    } catch (error) {
      const timedOut = error instanceof DOMException && error.name === "TimeoutError";
      if (!timedOut) throw error;
      if (attempt >= attempts) {
        throw new ApiError(`no answer from the service within ${ANSWER_TIMEOUT_MS / 1000} s${attempts > 1 ? ", twice" : ""}`, "TIMEOUT");
      }
    }
  }
  const answer = (await response.json()) as GraphQLAnswer<T>;
  if (answer.errors?.length) {
    const [first] = answer.errors;
    throw new ApiError(first.message, first.extensions?.code, first.extensions?.field);
  }
  if (!answer.data) throw new ApiError(`the API answered ${response.status} without data`, undefined);
  return answer.data;
}

/** An export route's file, fetched with the caller's token (a plain link could not carry it). */
export async function exported(path: string): Promise<Blob> {
  const response = await fetch(path, { headers: { authorization: headers().authorization ?? "" }, credentials: "same-origin" });
  if (!response.ok) {
    const answer = (await response.json().catch(() => ({}))) as GraphQLAnswer<unknown>;
    throw new ApiError(answer.errors?.[0]?.message ?? `export answered ${response.status}`, answer.errors?.[0]?.extensions?.code);
  }
  return response.blob();
}

export interface DecisionEvent {
  kind: string;
  planId: string;
  decisionId: string | null;
  reviewId: string | null;
  at: string;
  cursor: string;
}

const EVENTS = `subscription Events($plan: ID!, $after: String) {
  decisionEvents(planId: $plan, after: $after) { kind planId decisionId reviewId at cursor }
}`;

/**
 * decisionEvents for a set of plans over one graphql-transport-ws connection. It reconnects by
 * itself and resumes each plan after the last cursor it saw, so nothing is missed in between. When
 * the service cannot replay what was missed (the cursor is older than the events it keeps, beyond
 * the last it ever published after a restore, or too much was missed), the plan's stream starts
 * again from now and ``onLost`` says so, for the page to read that plan again.
 */
export class Live {
  private socket: WebSocket | null = null;
  private readonly plans = new Map<string, string | null>(); // plan -> last cursor seen
  private readonly operations = new Map<string, string>(); // subscription id -> plan
  private acknowledged = false;
  private closed = false;
  private retry = 0;
  private started = 0;

  constructor(
    private readonly onEvent: (event: DecisionEvent) => void,
    private readonly onLost: (planId: string) => void,
  ) {}

  follow(planIds: Iterable<string>): void {
    for (const id of planIds) {
      if (this.plans.has(id)) continue;
      this.plans.set(id, null);
      if (this.acknowledged) this.subscribe(id);
    }
    if (!this.socket && this.plans.size) this.connect();
  }

  stop(): void {
    this.closed = true;
    this.plans.clear();
    this.operations.clear();
    this.socket?.close(1000);
    this.socket = null;
  }

  /** For automation: resume ``planId`` after ``cursor`` on a new connection, as after a network loss. */
  reconnectAfter(planId: string, cursor: string): void {
    if (!this.plans.has(planId)) return;
    const old = this.socket;
    this.socket = null;
    old?.close(1000);
    this.plans.set(planId, cursor);
    this.connect();
  }

  private connect(): void {
    this.closed = false;
    const url = `${location.protocol === "https:" ? "wss:" : "ws:"}//${location.host}/graphql`;
    const socket = new WebSocket(url, "graphql-transport-ws");
    this.socket = socket;
    this.acknowledged = false;
    this.operations.clear();
    socket.addEventListener("open", () => {
      const token = storedToken();
      socket.send(JSON.stringify({ type: "connection_init", payload: token ? { Authorization: `Bearer ${token}` } : {} }));
    });
    socket.addEventListener("message", (message) => this.receive(socket, String(message.data)));
    socket.addEventListener("close", () => {
      if (this.socket !== socket) return;
      this.socket = null;
      this.acknowledged = false;
      if (!this.closed && this.plans.size) {
        this.retry = Math.min(this.retry + 1, 5);
        window.setTimeout(() => this.connect(), 500 * this.retry);
      }
    });
  }

  private receive(socket: WebSocket, text: string): void {
    if (socket !== this.socket) return; // one being closed
    const message = JSON.parse(text) as {
      type: string;
      id?: string;
      payload?: { data?: { decisionEvents?: DecisionEvent } | null; errors?: unknown[] } | unknown[];
    };
    const payload = Array.isArray(message.payload) ? { errors: message.payload } : message.payload;
    if (message.type === "connection_ack") {
      this.acknowledged = true;
      this.retry = 0;
      for (const id of this.plans.keys()) this.subscribe(id);
    } else if (message.type === "ping") {
      socket.send(JSON.stringify({ type: "pong" }));
    } else if (message.type === "next" && payload?.data?.decisionEvents) {
      const event = payload.data.decisionEvents;
      this.plans.set(event.planId, event.cursor);
      this.onEvent(event);
    } else if (message.type === "complete" && message.id) {
      this.operations.delete(message.id);
    } else if (message.type === "error" || (message.type === "next" && payload?.errors?.length)) {
      const planId = message.id ? this.operations.get(message.id) : undefined;
      if (message.id) this.operations.delete(message.id);
      // Refused from a cursor: start again from now and read the plan. Refused from now (a plan this
      // token may not see): nothing to resume, and asking again would be refused again.
      if (planId !== undefined && this.plans.get(planId) !== null) {
        this.plans.set(planId, null);
        this.subscribe(planId);
        this.onLost(planId);
      }
    }
  }

  private subscribe(planId: string): void {
    // A new id each time: the service may still hold the refused subscription's.
    const id = `${planId}:${(this.started += 1)}`;
    this.operations.set(id, planId);
    this.socket?.send(
      JSON.stringify({
        id,
        type: "subscribe",
        payload: { query: EVENTS, variables: { plan: planId, after: this.plans.get(planId) ?? null } },
      }),
    );
  }
}
