"""Top-level URLs: the site root and the API root."""
import pytest
from django.contrib.auth.models import User
from rest_framework.authtoken.models import Token


def test_site_root_sends_researchers_to_the_admin(client):
    response = client.get("/")
    assert response.status_code == 302
    assert response["Location"] == "/admin/"


@pytest.mark.django_db
def test_api_root_lists_every_collection(client):
    user = User.objects.create_user("analyst", password="x-very-long-pass", is_staff=True)
    token = Token.objects.create(user=user)
    response = client.get("/api/", HTTP_AUTHORIZATION=f"Token {token.key}")
    assert response.status_code == 200
    listed = set(response.json())
    assert {"studies", "items", "participants", "responses", "endpoints", "runs", "model-responses"} <= listed


@pytest.mark.django_db
def test_api_refuses_anonymous_callers(client):
    assert client.get("/api/responses/").status_code in (401, 403)
