import { routeOf } from '../../../functions/core/image/links';

describe('the routes of the API and apps page', () => {
  it('reads /apps and one file under it, and nothing deeper or around it', () => {
    expect(routeOf('/apps')).toEqual({ page: 'apps' });
    expect(routeOf('/apps/')).toEqual({ page: 'apps' });
    expect(routeOf('/apps/sharex.sxcu')).toEqual({ page: 'app-file', name: 'sharex.sxcu' });
    for (const path of ['/apps/x/y', '/apps//sharex.sxcu', '/appsx', '/apps.json'])
      expect([path, routeOf(path).page]).toEqual([path, 'none']);
    // the upload page is the home page, and keeps its own address
    expect(routeOf('/')).toEqual({ page: 'home' });
    expect(routeOf('/upload')).toEqual({ page: 'upload' });
  });
});
