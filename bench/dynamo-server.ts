/**
 * DynamoDB for the benchmark (dynalite), in its own process: DynamoDB is a remote service to the Lambda,
 * and dynalite's CPU must not count as fleetscope's. Prints one JSON line {"endpoint"}.
 */
import { ensureTables, startLocalDynamo } from '../local/dynamo.js';

const dynamo = await startLocalDynamo();
await ensureTables(dynamo.endpoint, { table: 'fleetscope', idempotencyTable: 'fleetscope-idempotency' });
process.stdout.write(`${JSON.stringify({ endpoint: dynamo.endpoint })}\n`);
process.stdin.resume();
process.stdin.on('end', () => {
  void dynamo.stop().then(() => process.exit(0));
});
