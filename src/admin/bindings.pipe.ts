import { Injectable, PipeTransform } from '@nestjs/common';
import { plainToInstance } from 'class-transformer';
import { validate } from 'class-validator';
import { AppError } from '../common/app-error.js';
import { describeValidationErrors } from '../common/validation.js';
import { GroupBindingDto, MAX_BINDINGS } from './dto/group.dto.js';

const MAX_LISTED = 20;

/**
 * Validates a JSON array body of `{projectId, role}` item by item, with the whitelist rules of the global pipe
 * (unknown fields refused), naming the index and the field of every problem. Stands in for ParseArrayPipe,
 * which would split a string body on commas and JSON-parse string items instead of refusing them.
 */
@Injectable()
export class BindingsPipe implements PipeTransform<unknown, Promise<GroupBindingDto[]>> {
  async transform(value: unknown): Promise<GroupBindingDto[]> {
    if (!Array.isArray(value)) {
      throw AppError.validation('The body must be a JSON array of {projectId, role}');
    }
    if (value.length > MAX_BINDINGS) {
      throw AppError.validation(`At most ${MAX_BINDINGS} bindings are allowed; got ${value.length}`);
    }
    const problems: string[] = [];
    const items: GroupBindingDto[] = [];
    for (const [index, item] of value.entries()) {
      if (typeof item !== 'object' || item === null || Array.isArray(item)) {
        problems.push(`[${index}] must be an object {projectId, role}`);
        continue;
      }
      const binding = plainToInstance(GroupBindingDto, item as object);
      const errors = await validate(binding, {
        whitelist: true,
        forbidNonWhitelisted: true,
        validationError: { target: false, value: true },
      });
      if (errors.length) {
        problems.push(describeValidationErrors(errors, `[${index}]`));
      } else {
        items.push(binding);
      }
    }
    if (problems.length) {
      const more =
        problems.length > MAX_LISTED ? `; and ${problems.length - MAX_LISTED} more invalid items` : '';
      throw AppError.validation(problems.slice(0, MAX_LISTED).join('; ') + more);
    }
    return items;
  }
}
