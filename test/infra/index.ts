/**
 * Real infrastructure for tests: nginx as a gateway, squid as a forward proxy, PostgreSQL for the team's
 * record, a throwaway CA, and loopback ports (CONTRIBUTING.md, "Tests against real infrastructure").
 */
export { type CaOptions, makeCa, type ServerCert, type TestCa } from './ca.js';
export { type Echo, type EchoRequest, startEcho } from './echo.js';
export { type Nginx, type NginxAccessEntry, type NginxLimitReq, type NginxOptions, type NginxRedirect, startNginx } from './nginx.js';
export { type Blackhole, blackhole, deadPort, deadProxy, freePort } from './ports.js';
export { type Postgres, type PostgresOptions, startPostgres } from './postgres.js';
export { findTool, missingInfra } from './process.js';
export { type Squid, type SquidAccessEntry, type SquidOptions, startSquid } from './squid.js';
export { type SwitchMode, startUpstreamSwitch, type UpstreamSwitch } from './switch.js';
