/** Types of scripts/tool-service.mjs, for the benchmark (TypeScript). */
export declare const TOOL_SERVICE_SECRET: string;
export declare function startToolService(): Promise<{
  url: string;
  calls: { webhookId: string; body: any; at: number }[];
  deliver(url: string, token: string, result: object): Promise<{ status: number; body: any }>;
  close(): Promise<void>;
}>;
