import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import { DependencyError } from '../core/errors';

/** Sends a DynamoDB request; any failure becomes a DependencyError (503), never a 4xx. */
export async function sendOrFail<T>(what: string, send: () => Promise<T>): Promise<T> {
  try {
    return await send();
  } catch (error) {
    throw new DependencyError(what, error);
  }
}

/** Sends a conditional write: its output when it took place, undefined when its condition failed. */
export async function sendConditional<T extends object>(what: string, send: () => Promise<T>): Promise<T | undefined> {
  try {
    return await send();
  } catch (error) {
    if (error instanceof ConditionalCheckFailedException) return undefined;
    throw new DependencyError(what, error);
  }
}

/** Sends a conditional write: true when it took place, false when its condition failed. */
export async function sendIfCondition(what: string, send: () => Promise<object>): Promise<boolean> {
  return (await sendConditional(what, send)) !== undefined;
}
