import served from '../../functions/http/openapi.json';
import { createTestService, PUBLIC_URL } from '../support/test-service';

describe('GET /api/1/openapi.json', () => {
  it('serves the OpenAPI document with the public base URL as its server, readable from any origin', async () => {
    const service = await createTestService();
    const response = await service.send(new Request(`${PUBLIC_URL}/api/1/openapi.json`));
    expect(response.statusCode).toBe(200);
    expect(response.headers?.['Content-Type']).toBe('application/json; charset=utf-8');
    expect(response.headers?.['Access-Control-Allow-Origin']).toBe('*');
    expect(JSON.parse(response.body)).toEqual({ ...served, servers: [{ url: PUBLIC_URL }] });
    // only reads
    const post = await service.send(new Request(`${PUBLIC_URL}/api/1/openapi.json`, { method: 'POST' }));
    expect([post.statusCode, post.headers?.['Allow']]).toEqual([405, 'GET, HEAD']);
  });
});
