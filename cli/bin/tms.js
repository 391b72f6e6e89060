#!/usr/bin/env node
// The `tms` command (API.md, "Command-line client"): see `tms --help` and cli/README.md.
import { main } from '../src/main.js';

process.exitCode = await main(process.argv.slice(2));
