#!/usr/bin/env node
// @ts-check
// The `muxbridge` command of the npm package: runs the binary of this platform's package
// (see launcher.js).
import { main } from "./launcher.js";

main();
