import { InvokeCommand, LambdaClient } from '@aws-sdk/client-lambda';
import type { KubeconfigRef } from '../shared/k8s/kubeconfig-ref.js';

/**
 * Registration's check against a deployed stack, run by its `verify` function: the cluster is reached
 * with the control plane's identity (the one member accounts trust), not the operator's.
 */
export async function verifyThroughStack(
  functionName: string,
  name: string,
  kubeconfig: KubeconfigRef,
): Promise<{ kubeSystemUid: string }> {
  const lambda = new LambdaClient({});
  try {
    const out = await lambda.send(
      new InvokeCommand({
        FunctionName: functionName,
        Payload: Buffer.from(JSON.stringify({ name, kubeconfig })),
      }),
    );
    const answer = JSON.parse(Buffer.from(out.Payload ?? []).toString('utf8') || '{}') as {
      kubeSystemUid?: string;
      error?: string;
      errorMessage?: string;
    };
    if (out.FunctionError)
      throw new Error(`the verify function failed: ${answer.errorMessage ?? out.FunctionError}`);
    if (answer.error) throw new Error(answer.error);
    if (!answer.kubeSystemUid) throw new Error('the verify function answered without a kube-system UID');
    return { kubeSystemUid: answer.kubeSystemUid };
  } finally {
    lambda.destroy();
  }
}
