// The trends page at /explore/trends: a project's plots, drawn with Chart.js from one `trends` query, each with its data as CSV.

import {
  BarController,
  BarElement,
  CategoryScale,
  Chart,
  type ChartConfiguration,
  Legend,
  LinearScale,
  LineController,
  LineElement,
  PointElement,
  Tooltip,
} from "chart.js";

import { ApiError, query, storedToken, storeToken } from "./api";
import { short, typeName } from "./caption";
import { csv, type Table } from "./csv";

Chart.register(BarController, BarElement, CategoryScale, LinearScale, LineController, LineElement, PointElement, Legend, Tooltip);

interface TrendDay {
  day: string;
  decisions: number;
  corrections: number;
}
interface TypeRate {
  decisionType: string;
  decisions: number;
  corrected: number;
  rate: number;
}
interface ActorRate {
  actor: string | null;
  decisions: number;
  corrected: number;
  rate: number;
}
interface ConfidenceOutcome {
  low: number;
  high: number;
  corrected: number;
  kept: number;
}
interface WaitBucket {
  label: string;
  lowSeconds: number;
  highSeconds: number | null;
  resolved: number;
  pending: number;
}
interface Invalidating {
  decisionId: string;
  planId: string;
  planDescription: string;
  sequenceNumber: number;
  decisionType: string;
  question: string;
  chosenOption: string;
  corrections: number;
  invalidatedDecisions: number;
  invalidatedPlans: number;
  lastCorrectedAt: string;
}
export interface Trends {
  project: string | null;
  projects: string[];
  decisionsPerDay: TrendDay[];
  correctionRateByType: TypeRate[];
  correctionRateByActor: ActorRate[];
  confidence: ConfidenceOutcome[];
  reviewWaitingTimes: {
    resolved: number;
    pending: number;
    medianSeconds: number | null;
    p90Seconds: number | null;
    longestSeconds: number | null;
    oldestPendingSeconds: number | null;
    buckets: WaitBucket[];
  };
  topInvalidating: Invalidating[];
}

const TRENDS = `query Trends($project: String, $since: DateTime, $until: DateTime) {
  trends(project: $project, since: $since, until: $until) {
    project projects
    decisionsPerDay { day decisions corrections }
    correctionRateByType { decisionType decisions corrected rate }
    correctionRateByActor { actor decisions corrected rate }
    confidence { low high corrected kept }
    reviewWaitingTimes {
      resolved pending medianSeconds p90Seconds longestSeconds oldestPendingSeconds
      buckets { label lowSeconds highSeconds resolved pending }
    }
    topInvalidating {
      decisionId planId planDescription sequenceNumber decisionType question chosenOption
      corrections invalidatedDecisions invalidatedPlans lastCorrectedAt
    }
  }
}`;

const COLOURS = { decisions: "#3b6ea5", corrected: "#c0504d", kept: "#6a9f58", pending: "#d9a441" };

/** Each plot: its element's id, the CSV's columns (GraphQL's own field names) and rows, and what Chart.js draws. */
interface Plot {
  id: string;
  table: (trends: Trends) => Table;
  chart: (trends: Trends) => ChartConfiguration;
}

function bars(labels: string[], datasets: { label: string; data: number[]; colour: string }[], options: object = {}): ChartConfiguration {
  return {
    type: "bar",
    data: { labels, datasets: datasets.map((d) => ({ label: d.label, data: d.data, backgroundColor: d.colour })) },
    options: {
      animation: false,
      responsive: true,
      maintainAspectRatio: false,
      scales: { y: { beginAtZero: true, ticks: { precision: 0 } } },
      ...options,
    },
  };
}

const percent = { scales: { y: { beginAtZero: true, max: 100, ticks: { callback: (value: number | string) => `${value}%` } } } };

const actorName = (actor: string | null): string => actor ?? "(no owner)";
const bucketName = (b: ConfidenceOutcome): string => `${b.low.toFixed(1)}–${b.high.toFixed(1)}`;

export const PLOTS: Plot[] = [
  {
    id: "per-day",
    table: (t) => ({ columns: ["day", "decisions", "corrections"], rows: t.decisionsPerDay.map((d) => [d.day, d.decisions, d.corrections]) }),
    chart: (t) =>
      bars(t.decisionsPerDay.map((d) => d.day), [
        { label: "decisions", data: t.decisionsPerDay.map((d) => d.decisions), colour: COLOURS.decisions },
        { label: "corrections", data: t.decisionsPerDay.map((d) => d.corrections), colour: COLOURS.corrected },
      ]),
  },
  {
    id: "by-type",
    table: (t) => ({
      columns: ["decisionType", "decisions", "corrected", "rate"],
      rows: t.correctionRateByType.map((r) => [r.decisionType, r.decisions, r.corrected, r.rate]),
    }),
    chart: (t) =>
      bars(
        t.correctionRateByType.map((r) => typeName(r.decisionType)),
        [{ label: "corrected (% of decisions)", data: t.correctionRateByType.map((r) => r.rate * 100), colour: COLOURS.corrected }],
        percent,
      ),
  },
  {
    id: "by-actor",
    table: (t) => ({
      columns: ["actor", "decisions", "corrected", "rate"],
      rows: t.correctionRateByActor.map((r) => [r.actor, r.decisions, r.corrected, r.rate]),
    }),
    chart: (t) =>
      bars(
        t.correctionRateByActor.map((r) => actorName(r.actor)),
        [{ label: "corrected (% of decisions)", data: t.correctionRateByActor.map((r) => r.rate * 100), colour: COLOURS.corrected }],
        percent,
      ),
  },
  {
    id: "confidence",
    table: (t) => ({ columns: ["low", "high", "corrected", "kept"], rows: t.confidence.map((b) => [b.low, b.high, b.corrected, b.kept]) }),
    chart: (t) =>
      bars(t.confidence.map(bucketName), [
        { label: "corrected", data: t.confidence.map((b) => b.corrected), colour: COLOURS.corrected },
        { label: "kept", data: t.confidence.map((b) => b.kept), colour: COLOURS.kept },
      ]),
  },
  {
    id: "waits",
    table: (t) => ({
      columns: ["label", "lowSeconds", "highSeconds", "resolved", "pending"],
      rows: t.reviewWaitingTimes.buckets.map((b) => [b.label, b.lowSeconds, b.highSeconds, b.resolved, b.pending]),
    }),
    chart: (t) =>
      bars(t.reviewWaitingTimes.buckets.map((b) => b.label), [
        { label: "resolved, by wait", data: t.reviewWaitingTimes.buckets.map((b) => b.resolved), colour: COLOURS.decisions },
        { label: "pending, by age", data: t.reviewWaitingTimes.buckets.map((b) => b.pending), colour: COLOURS.pending },
      ]),
  },
  {
    id: "invalidating",
    table: (t) => ({
      columns: [
        "decisionId",
        "planId",
        "planDescription",
        "sequenceNumber",
        "decisionType",
        "question",
        "chosenOption",
        "corrections",
        "invalidatedDecisions",
        "invalidatedPlans",
        "lastCorrectedAt",
      ],
      rows: t.topInvalidating.map((d) => [
        d.decisionId,
        d.planId,
        d.planDescription,
        d.sequenceNumber,
        d.decisionType,
        d.question,
        d.chosenOption,
        d.corrections,
        d.invalidatedDecisions,
        d.invalidatedPlans,
        d.lastCorrectedAt,
      ]),
    }),
    chart: (t) =>
      bars(
        t.topInvalidating.map((d) => `#${d.sequenceNumber} ${typeName(d.decisionType)}: ${short(d.chosenOption, 40)}`),
        [
          { label: "decisions invalidated", data: t.topInvalidating.map((d) => d.invalidatedDecisions), colour: COLOURS.corrected },
          { label: "plans invalidated", data: t.topInvalidating.map((d) => d.invalidatedPlans), colour: COLOURS.pending },
        ],
        { indexAxis: "y", scales: { x: { beginAtZero: true, ticks: { precision: 0 } } } },
      ),
  },
];

const element = <T extends HTMLElement>(id: string): T => document.getElementById(id) as T;
const ui = {
  project: element<HTMLSelectElement>("project"),
  since: element<HTMLInputElement>("since"),
  until: element<HTMLInputElement>("until"),
  filters: element<HTMLFormElement>("filters"),
  tokenForm: element<HTMLFormElement>("token-form"),
  token: element<HTMLInputElement>("token"),
  status: element<HTMLParagraphElement>("status"),
  waitSummary: element<HTMLParagraphElement>("wait-summary"),
};

const charts = new Map<string, Chart>();
let shown: Trends | null = null;
let asked = 0;

function say(text: string, error = false): void {
  ui.status.textContent = text;
  ui.status.classList.toggle("error", error);
}

/** The filters as the page's address keeps them: ?project=X&since=YYYY-MM-DD&until=YYYY-MM-DD (both days included). */
function readAddress(): void {
  const params = new URLSearchParams(location.search);
  ui.since.value = params.get("since") ?? "";
  ui.until.value = params.get("until") ?? "";
  const project = params.get("project") ?? "";
  if (project && ![...ui.project.options].some((o) => o.value === project)) ui.project.add(new Option(project, project));
  ui.project.value = project;
}

function writeAddress(): void {
  const params = new URLSearchParams();
  if (ui.project.value) params.set("project", ui.project.value);
  if (ui.since.value) params.set("since", ui.since.value);
  if (ui.until.value) params.set("until", ui.until.value);
  const search = params.toString();
  history.replaceState(null, "", `${location.pathname}${search ? `?${search}` : ""}`);
}

function nextDay(day: string): string {
  const moment = new Date(`${day}T00:00:00Z`);
  moment.setUTCDate(moment.getUTCDate() + 1);
  return moment.toISOString();
}

function seconds(value: number | null): string {
  if (value === null) return "–";
  if (value < 60) return `${value.toFixed(1)} s`;
  if (value < 3600) return `${(value / 60).toFixed(1)} min`;
  if (value < 86400) return `${(value / 3600).toFixed(1)} h`;
  return `${(value / 86400).toFixed(1)} days`;
}

function offerProjects(projects: string[]): void {
  const chosen = ui.project.value;
  const offered = new Set(["", ...projects, chosen]);
  for (const option of [...ui.project.options]) if (!offered.has(option.value)) option.remove();
  for (const project of projects) {
    if (![...ui.project.options].some((o) => o.value === project)) ui.project.add(new Option(project, project));
  }
  ui.project.value = chosen;
}

function draw(trends: Trends): void {
  for (const plot of PLOTS) {
    const canvas = element<HTMLElement>(plot.id).querySelector("canvas") as HTMLCanvasElement;
    charts.get(plot.id)?.destroy();
    charts.set(plot.id, new Chart(canvas, plot.chart(trends)));
  }
  const waits = trends.reviewWaitingTimes;
  ui.waitSummary.textContent =
    `${waits.resolved} resolved: median ${seconds(waits.medianSeconds)}, 90th percentile ${seconds(waits.p90Seconds)}, ` +
    `longest ${seconds(waits.longestSeconds)}; ${waits.pending} pending, the oldest for ${seconds(waits.oldestPendingSeconds)}`;
}

async function load(): Promise<void> {
  const mine = ++asked;
  document.body.dataset.busy = "true";
  say("reading…");
  writeAddress();
  try {
    const variables = {
      project: ui.project.value || null,
      since: ui.since.value ? `${ui.since.value}T00:00:00Z` : null,
      until: ui.until.value ? nextDay(ui.until.value) : null,
    };
    const { trends } = await query<{ trends: Trends }>(TRENDS, variables);
    if (mine !== asked) return;
    shown = trends;
    offerProjects(trends.projects);
    draw(trends);
    const days = trends.decisionsPerDay.length;
    say(`${trends.project ?? "every project"}: ${days} day${days === 1 ? "" : "s"} with decisions`);
  } catch (error) {
    if (mine !== asked) return;
    const code = error instanceof ApiError && error.code ? ` (${error.code})` : "";
    say(`${error instanceof Error ? error.message : String(error)}${code}`, true);
  } finally {
    if (mine === asked) document.body.dataset.busy = "false";
  }
}

function download(plotId: string): void {
  const plot = PLOTS.find((p) => p.id === plotId);
  if (!plot || !shown) return;
  const blob = new Blob([csv(plot.table(shown))], { type: "text/csv;charset=utf-8" });
  const link = document.createElement("a");
  link.href = URL.createObjectURL(blob);
  link.download = `trends-${shown.project ?? "all"}-${plot.id}.csv`;
  document.body.append(link);
  link.click();
  link.remove();
  setTimeout(() => URL.revokeObjectURL(link.href), 10_000);
}

ui.filters.addEventListener("change", () => void load());
ui.filters.addEventListener("submit", (event) => {
  event.preventDefault();
  void load();
});
ui.tokenForm.addEventListener("submit", (event) => {
  event.preventDefault();
  storeToken(ui.token.value.trim());
  ui.token.value = "";
  ui.token.placeholder = storedToken() ? "token in use" : "none needed locally";
  void load();
});
for (const button of document.querySelectorAll<HTMLButtonElement>("button.csv")) {
  button.addEventListener("click", () => download(button.dataset.plot ?? ""));
}

/** For automation (the browser tests): what the page was answered, and what each chart was given to draw. */
(window as unknown as { decisiontrailTrends: object }).decisiontrailTrends = {
  answer: () => shown,
  plotted: () =>
    Object.fromEntries(
      [...charts].map(([id, chart]) => [
        id,
        { labels: chart.data.labels, datasets: chart.data.datasets.map((d) => ({ label: d.label, data: d.data })) },
      ]),
    ),
};

if (storedToken()) ui.token.placeholder = "token in use";
readAddress();
void load();
