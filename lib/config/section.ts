/**
 * What the config knows of a backend: its section (a zod schema, the keys `bridge.hello` may not
 * set, the keys it no longer reads), declared by the backend's module and merged into the config
 * under the backend's name (`lib/config/config.ts`).
 *
 * @module
 */

import type { z } from "zod";
import type { ExternalKind } from "./hello_forbidden.ts";

/**
 * The schema of a backend's config section: a zod schema (the config is zod's, and `schema
 * config` is generated from it).
 *
 * @internal
 */
export type SectionSchema = z.ZodType;

/**
 * A backend's config section, as its module declares it (`BackendModule.config`): the key is the
 * backend's name.
 *
 * @typeParam S The section's zod schema: a strict object whose keys all have defaults or are
 *   optional (`.prefault({})`), described for `schema config` and the README.
 *
 * @internal
 */
export interface ConfigSection<S extends SectionSchema = SectionSchema> {
  /** The section's schema. */
  readonly schema: S;
  /**
   * The section's keys that name a program to run, a file, or a socket, server or session that
   * receives pane commands and credentials: `bridge.hello` cannot set them (`hello_forbidden.ts`).
   * A key naming a socket or a session by name uses `plainName` (`plain_name.ts`).
   */
  readonly external: Readonly<Record<string, ExternalKind>>;
  /**
   * Keys of the section muxbridge no longer reads, each with what replaced it (see
   * `removed_keys.ts`).
   */
  readonly removed?: Readonly<Record<string, string>>;
}

/** What the config needs of a backend: its name (the section's key) and its section. */
export interface SectionOwner {
  /** The backend's name. */
  readonly name: string;
  /** Its section. */
  readonly config: ConfigSection;
}

/**
 * The sections of a list of backends, by name, as the resolved config holds them.
 *
 * @typeParam B The backends.
 *
 * @internal
 */
export type SectionsOf<B extends readonly SectionOwner[]> = {
  readonly [M in B[number] as M["name"]]: z.output<M["config"]["schema"]>;
};
