/**
 * The configuration: its keys, defaults and layers (`config.ts`: defaults < config file <
 * environment < flags, resolved once into a checked `Config`), the section each backend declares
 * for itself (`section.ts`), keys that were removed and are warned about rather than refused
 * (`removed_keys.ts`), keys a `bridge.hello` may never set (`hello_forbidden.ts`), the form of a socket or session
 * name (`plain_name.ts`), and zod issues
 * told in words (`describe_issues.ts`, which the bridge protocol uses too).
 *
 * May import: `lib/sys/` only. Backends declare their sections through `lib/backend/`, which
 * imports this folder; nothing here knows a backend's name. `tests/import_direction_test.ts`
 * keeps it so.
 *
 * @module
 */

export * from "./config.ts";
export * from "./plain_name.ts";
export * from "./section.ts";
