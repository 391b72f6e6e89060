import { Injectable } from '@nestjs/common';

interface Resolver {
  /** What the parameter names, for messages: "Run 42 not found". */
  noun: string;
  find: (id: string) => Promise<string | null>;
}

/**
 * Finds the project a route parameter belongs to (`runId` → the run's project), so one guard can check roles
 * on every route. Features register their parameters at start-up; access/ never imports them.
 */
@Injectable()
export class ProjectLocator {
  private readonly resolvers = new Map<string, Resolver>([
    ['projectId', { noun: 'Project', find: (id) => Promise.resolve(id) }],
  ]);

  register(param: string, noun: string, find: (id: string) => Promise<string | null>): void {
    this.resolvers.set(param, { noun, find });
  }

  async locate(param: string, value: string): Promise<{ projectId: string | null; noun: string }> {
    const resolver = this.resolvers.get(param);
    if (!resolver) {
      throw new Error(`No project resolver for route parameter '${param}'`);
    }
    const projectId = /^\d{1,18}$/.test(value) ? await resolver.find(value) : null;
    return { projectId, noun: resolver.noun };
  }
}
