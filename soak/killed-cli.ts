/**
 * The CLI (from its sources, as the runtimes run) killed with SIGKILL mid-command, at a chosen point:
 * just before its DynamoDB write number SOAK_KILL_AT_WRITE (1-based) is sent. A real kill at a point
 * that does not depend on timing, so that the soak hits it every run: `node --import tsx
 * soak/killed-cli.ts cluster deregister --name X --state-dir D`. A command that makes fewer writes ends
 * normally (exit 0 or its own code), and the soak says the kill was missed.
 */
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { main } from '../cli/main.js';

const at = Number(process.env.SOAK_KILL_AT_WRITE);
if (!Number.isInteger(at) || at < 1) throw new Error('soak killed-cli: SOAK_KILL_AT_WRITE must be 1 or more');
const WRITES = /^(Put|Update|Delete|TransactWrite|BatchWrite)(Item)?Command$/;
const proto = DynamoDBDocumentClient.prototype as unknown as {
  send: (c: object, ...r: unknown[]) => unknown;
};
const send = proto.send;
let writes = 0;
proto.send = function (this: unknown, command: object, ...rest: unknown[]) {
  if (WRITES.test(command.constructor.name) && ++writes >= at) process.kill(process.pid, 'SIGKILL');
  return send.call(this, command, ...rest);
};
process.exit(await main(process.argv.slice(2)));
