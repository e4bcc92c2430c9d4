import coretorch as ct


def test_add_shape_on_every_device(device):
    a = ct.zeros(2, 3, device=device)
    assert (a + 1).shape == (2, 3)
    assert (a + 1).device == ct.device(device)
