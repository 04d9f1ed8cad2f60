/**
 * Imported first by `main.ts`, before any module that builds a zod schema: turns off zod's
 * generated object parsers (`jitless`). zod decides per object schema, when the schema is built,
 * whether to compile a faster parser for it with `new Function` on its first parse; an idle bridge
 * paid about 2.7 MiB under `deno run` and 0.4 MiB in the Bun binary for those parsers, which saved
 * under a microsecond per parsed line (`bench/RESULTS.md`, "Memory"). What a schema accepts and
 * returns is the same either way.
 *
 * Modules imported before this one keep the generated parsers: `tests/sys/zod_jitless_test.ts` checks
 * that it stays `main.ts`'s first import.
 *
 * @module
 */

import { z } from "zod";

z.config({ jitless: true });
