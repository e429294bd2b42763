/**
 * undici's `ProxyAgent` alone, loaded by src/http/transport.ts only when a request goes through a
 * proxy (docs/http.md#proxies). It opens its tunnels with `Dispatcher.prototype.connect`, which
 * undici's index adds: added here the same way, without loading the index.
 */
import connect from 'undici/lib/api/api-connect.js';
import Dispatcher from 'undici/lib/dispatcher/dispatcher.js';
import ProxyAgent from 'undici/lib/dispatcher/proxy-agent.js';

Dispatcher.prototype.connect ??= connect;

export { ProxyAgent };
