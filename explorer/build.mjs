// Builds the explorer into the Python package (src/decisiontrail/explorer_static), which serves it at /explore.
import { build } from "esbuild";
import { copyFile, mkdir, rm } from "node:fs/promises";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
const out = join(here, "..", "src", "decisiontrail", "explorer_static");

await rm(out, { recursive: true, force: true });
await mkdir(out, { recursive: true });
// The explorer (/explore) and the trends page (/explore/trends), each a bundle of its own.
for (const [entry, bundle] of [["main.ts", "explorer.js"], ["trends.ts", "trends.js"]]) {
  await build({
    entryPoints: [join(here, "src", entry)],
    bundle: true,
    minify: process.env.EXPLORER_DEBUG !== "1",
    format: "esm",
    target: "es2022",
    outfile: join(out, bundle),
    legalComments: "eof",
    logLevel: "warning",
  });
}
for (const name of ["index.html", "explorer.css", "trends.html", "trends.css"]) {
  await copyFile(join(here, "static", name), join(out, name));
}
console.log(`explorer built into ${out}`);
